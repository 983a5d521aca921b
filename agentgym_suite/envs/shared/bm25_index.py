"""A small BM25 index over text documents (``bm25s``), shared by the WebShop and SearchQA envs.

Documents and queries go through the same tokenizer: lower-case alphanumeric words, English stop
words removed, and a light plural-stripping stemmer (``shoes`` -> ``shoe``), close to what a
Lucene English analyzer does for these short texts. Queries whose tokens are all unknown or stop
words return no hits instead of arbitrary zero-score documents.
"""

from __future__ import annotations

import re
from typing import Sequence

import bm25s

_WORD = re.compile(r"[0-9a-z]+")
STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with i me my we our you your he she him her his its what which
    who whom do does did have has had am were been being""".split()
)


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case, split into words, drop stop words, strip plurals."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


class BM25Index:
    """BM25 ranking over a fixed list of documents."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.size = len(documents)
        self._retriever = bm25s.BM25()
        # bm25s cannot index an empty document list; a placeholder keeps the API uniform.
        corpus = [tokenize(doc) or ["_empty_"] for doc in documents] or [["_empty_"]]
        self._retriever.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` ``(document index, score)`` pairs with a positive score, best first."""
        tokens = tokenize(query)
        if not tokens or self.size == 0 or k <= 0:
            return []
        docs, scores = self._retriever.retrieve([tokens], k=min(k, self.size), show_progress=False, n_threads=1)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]

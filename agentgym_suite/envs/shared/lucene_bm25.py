"""BM25 ranking as Pyserini's ``LuceneSearcher`` does it with its defaults (Anserini 0.14 / Lucene 8.11).

WebShop indexes its products with Pyserini and searches with ``LuceneSearcher.search(query, k)``;
this module reproduces that ranking in Python:

* **analysis** (Anserini's default English analyzer): Unicode word segmentation (UAX #29, as
  Lucene's ``StandardTokenizer``; segments with a letter, digit, ideograph or emoji are kept), the
  English possessive ``'s`` dropped, lower case, Lucene's 33 English stop words removed, and
  Porter stemming as Lucene's ``PorterStemmer`` does it (:mod:`agentgym_suite.envs.shared.porter_stemmer`);
* **query**: a bag of words, each distinct term one clause boosted by its count in the query;
* **scoring**: Lucene 8's BM25 with ``k1=0.9, b=0.4``: ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``,
  term score ``w - w / (1 + tf / (k1 * (1 - b + b * dl / avgdl)))`` with ``w = boost * idf``, in
  32-bit floats, where ``dl`` is the document length after Lucene's one-byte norm encoding
  (exact below 24 tokens, rounded down to 4 significant bits above);
* **order**: by score, ties by document id (Anserini's ``BREAK_SCORE_TIES_BY_DOCID`` sort). Pyserini
  then rounds the scores it reports to four decimals and nudges equal ones apart (its score-ties
  adjuster) without reordering; :meth:`LuceneBM25Index.search` returns the unrounded scores.

Word segmentation uses the ``regex`` module's current Unicode tables where Lucene 8.11 has Unicode
9's, so rare scripts and emoji sequences may segment differently; ``tests/conformance/webshop``
compares rankings with Pyserini's on WebShop text.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np
import regex

from agentgym_suite.envs.shared.porter_stemmer import porter_stem

K1 = 0.9
B = 0.4
LUCENE_STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with""".split()
)
"""Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``."""

_SEGMENT = regex.compile(r"(?V1w)\b")
_WORD_LIKE = regex.compile(
    r"[\p{WB=ALetter}\p{WB=Hebrew_Letter}\p{WB=Numeric}\p{WB=Katakana}\p{Ideographic}\p{Script=Hiragana}"
    r"\p{Extended_Pictographic}]"
)
_POSSESSIVE = regex.compile(r"['’＇][sS]$")


class LuceneEnglishAnalyzer:
    """Anserini's default analyzer: standard tokens, possessives, lower case, stop words, Porter."""

    def analyze(self, text: str) -> list[str]:
        """The index terms of ``text``, in order."""
        terms = []
        for segment in _SEGMENT.split(text):
            if not _WORD_LIKE.search(segment):
                continue
            token = _POSSESSIVE.sub("", segment).lower()
            if token and token not in LUCENE_STOP_WORDS:
                terms.append(porter_stem(token))
        return terms


def _int_to_int4(value: int) -> int:
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_int(encoded: int) -> int:
    bits, shift = encoded & 0x07, (encoded >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_FREE_VALUES = 255 - _int_to_int4(2**31 - 1)


def lucene_norm_length(length: int) -> int:
    """A field length as Lucene's BM25 sees it after ``SmallFloat.intToByte4`` / ``byte4ToInt``."""
    if length < _FREE_VALUES:
        return length
    return _FREE_VALUES + _int4_to_int(_int_to_int4(length - _FREE_VALUES))


class LuceneBM25Index:
    """Pyserini-compatible BM25 search over a fixed list of ``(doc id, text)`` documents."""

    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str], *, k1: float = K1, b: float = B) -> None:
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} document ids for {len(texts)} texts; give one id per text.")
        self.analyzer = LuceneEnglishAnalyzer()
        self.doc_ids = list(doc_ids)
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        lengths = []
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for number, text in enumerate(texts):
            counts = Counter(self.analyzer.analyze(text))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(number)
                tfs.append(tf)
        self._postings = {t: (np.array(d, dtype=np.int64), np.array(f, dtype=np.float32)) for t, (d, f) in postings.items()}
        count = len(self.doc_ids)
        indexed = [n for n in lengths if n > 0]
        self._doc_count = len(indexed)
        avgdl = np.float32(sum(indexed) / len(indexed)) if indexed else np.float32(1.0)
        k1_, b_ = np.float32(k1), np.float32(b)
        norm_lengths = np.array([lucene_norm_length(n) for n in lengths], dtype=np.float32)
        self._inverse_norm = (np.float32(1.0) / (k1_ * ((np.float32(1.0) - b_) + b_ * norm_lengths / avgdl))).astype(np.float32)
        self._order_key = np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")
        self._rank_of_id = np.empty(count, dtype=np.int64)
        self._rank_of_id[self._order_key] = np.arange(count)

    def _idf(self, doc_freq: int) -> np.float32:
        return np.float32(math.log(1 + (self._doc_count - doc_freq + 0.5) / (doc_freq + 0.5)))

    def scores(self, query: str) -> np.ndarray:
        """Lucene's float32 score of every document for ``query`` (0 where no term matches)."""
        total = np.zeros(len(self.doc_ids), dtype=np.float64)
        for term, boost in Counter(self.analyzer.analyze(query)).items():
            if term not in self._postings:
                continue
            docs, tfs = self._postings[term]
            weight = np.float32(boost) * self._idf(len(docs))
            part = weight - weight / (np.float32(1.0) + tfs * self._inverse_norm[docs])
            total[docs] += part.astype(np.float32)
        return total.astype(np.float32)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The top ``k`` ``(doc id, score)`` pairs, ranked and tie-broken as Pyserini returns them."""
        if k <= 0 or not self.doc_ids:
            return []
        scores = self.scores(query)
        matched = np.flatnonzero(scores > 0)
        if matched.size == 0:
            return []
        ranked = matched[np.lexsort((self._rank_of_id[matched], -scores[matched]))][:k]
        return [(self.doc_ids[i], float(scores[i])) for i in ranked]

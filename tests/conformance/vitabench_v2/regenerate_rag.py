"""Regenerate ``rag.json``: upstream VitaBench 2.0's RAG memory on the fixture users' interactions.

Not run by pytest. Run it with the upstream source on ``PYTHONPATH`` (see ``regenerate_metrics.py``)::

    cd /work/scratch/vita2 && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
        /work/scratch/vita/venv/bin/python /work/wt/vita2/tests/conformance/vitabench_v2/regenerate_rag.py

Upstream's ``RAGMemory`` is built by its factory (``memory.yaml``'s ``rag`` settings) and, for the
splitting, once more with small chunks (``chunk_size=24, chunk_overlap=6``). Its embedding call
is replaced by :func:`letter_embedding` (the test gives our memory the same function as its
encoder), or by a failing call for the keyword fallback. Recorded: the stored chunks, and
``read(query)`` / ``query_preference_memory(query)`` for each query. Without the cl100k_base
file (it is not shipped, and this machine is offline) upstream counts 2 characters a token.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import vita.memory.rag_memory as rag
from vita.memory import create_memory

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parents[1] / "envs" / "vitabench_v2_fixture.py"
OUT = HERE / "rag.json"
MIRROR = Path("/work/.mirror/meituan-longcat+VitaBench-2.0/repo")
QUERIES = ["Order me lunch, the usual.", "peanuts allergy", "hotel room near the harbour", "zzz"]
LONG = {"type": "conversation", "timestamp": "2025-04-05 09:00:00",
        "content": {"text": "I usually travel light and prefer quiet hotel rooms far from the elevator; " * 4}}


def letter_embedding(text: str) -> list[float]:
    """A deterministic stand-in embedding: counts of the letters a-z (lower-cased)."""
    lowered = text.lower()
    return [float(lowered.count(chr(c))) for c in range(ord("a"), ord("z") + 1)]


def fixture_users() -> list[dict]:
    spec = importlib.util.spec_from_file_location("vitabench_v2_fixture", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tasks()


def record(memory) -> dict:
    return {"chunks": [{k: c[k] for k in ("text", "keywords", "timestamp", "type")} for c in memory._chunks],
            "read": {q: memory.read(q) for q in QUERIES}, "read_all": memory.read(),
            "query_tool": {q: memory.query_preference_memory(q) for q in QUERIES},
            "settings": {"top_k": memory.top_k, "similarity_threshold": memory.similarity_threshold,
                         "chunk_size": memory.chunk_size, "chunk_overlap": memory.chunk_overlap}}


def fail(texts, max_concurrency=1):
    raise RuntimeError("no embedding endpoint")


def main() -> None:
    assert rag._ENCODING is None, "cl100k_base loaded: the expected outputs assume upstream's offline fallback"
    commit = subprocess.run(["git", f"--git-dir={MIRROR}", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cases = {}
    for user in fixture_users():
        interactions = [i for s in user["subtasks"] for i in s.get("interactions") or []] + [LONG]
        for name, embed, extra in (("vector", lambda texts, max_concurrency=64: [letter_embedding(t) for t in texts], {}),
                                   ("keyword", fail, {}),
                                   ("small_chunks", lambda texts, max_concurrency=64: [letter_embedding(t) for t in texts],
                                    {"chunk_size": 24, "chunk_overlap": 6})):
            rag.embed_texts = embed
            memory = create_memory(memory_type="rag", language="english", **extra)
            memory.update(interactions)
            cases[f"{user['id']}/{name}"] = {"interactions": interactions, "options": extra, **record(memory)}
    OUT.write_text(json.dumps({"upstream": "meituan-longcat/VitaBench-2.0", "commit": commit, "queries": QUERIES,
                               "cases": cases}, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

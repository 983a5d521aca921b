"""Locate and read the BFCL v4 data shipped inside the ``bfcl-eval`` wheel.

The wheel is imported lazily; when it is missing a :class:`BackendNotInstalledError` names
the exact install command (the package's pinned dependency set is not installed on purpose).
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentgym_suite.core.errors import BackendNotInstalledError, NoNetworkError

BFCL_VERSION = "2026.3.23"
INSTALL_COMMAND = f"pip install --no-deps bfcl-eval=={BFCL_VERSION} mpmath"

MULTI_TURN = ("base", "miss_func", "miss_param", "long_context")
SINGLE_TURN = (
    "simple", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "irrelevance", "live_irrelevance", "live_relevance",
)
NO_CALL_EXPECTED = ("irrelevance", "live_irrelevance")
CALL_EXPECTED_ANY = ("live_relevance",)
OFFLINE_UNAVAILABLE = ("web_search", "memory", "memory_kv", "memory_vector", "memory_rec_sum")

_FILE_STEM = {c: f"multi_turn_{c}" for c in MULTI_TURN}
_FILE_STEM.update({c: c for c in SINGLE_TURN})
_FILE_STEM["simple"] = "simple_python"

FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""Backend class -> function-doc file of the offline multi-turn backends."""


def is_multi_turn(category: str) -> bool:
    """True for the four multi-turn categories."""
    return category in MULTI_TURN


def check_category(category: str) -> str:
    """Return ``category`` when supported; explain what to pick otherwise."""
    if category in MULTI_TURN or category in SINGLE_TURN:
        return category
    if category in OFFLINE_UNAVAILABLE or category.startswith("memory"):
        raise NoNetworkError(
            f"BFCL category {category!r} is not available offline: web_search calls a live search API "
            "and the memory categories need a hub embedding model. Choose one of "
            f"{', '.join(MULTI_TURN + SINGLE_TURN)}."
        )
    raise ValueError(f"Unknown BFCL category {category!r}; choose one of {', '.join(MULTI_TURN + SINGLE_TURN)}.")


def package_root() -> Path:
    """Directory of the installed ``bfcl_eval`` package (without importing it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BackendNotInstalledError(
            "BFCL-v0 needs the optional package 'bfcl-eval', which is not installed. Its pinned "
            f"dependencies conflict with this stack, so install it without them:  {INSTALL_COMMAND}"
        )
    return Path(list(spec.submodule_search_locations)[0])


def data_root() -> Path:
    """``bfcl_eval/data`` inside the installed wheel."""
    root = package_root() / "data"
    if not root.is_dir():
        raise BackendNotInstalledError(f"bfcl-eval is installed but has no data folder at {root}; reinstall with:  {INSTALL_COMMAND}")
    return root


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@lru_cache(maxsize=None)
def load_questions(category: str) -> dict[str, dict[str, Any]]:
    """Test entries of ``category`` by id, in file order."""
    path = data_root() / f"BFCL_v4_{_FILE_STEM[check_category(category)]}.json"
    return {entry["id"]: entry for entry in _read_jsonl(path)}


@lru_cache(maxsize=None)
def load_answers(category: str) -> dict[str, Any]:
    """Ground truth of ``category`` by id (empty for categories without a possible-answer file)."""
    path = data_root() / "possible_answer" / f"BFCL_v4_{_FILE_STEM[check_category(category)]}.json"
    if not path.exists():
        return {}
    return {entry["id"]: entry["ground_truth"] for entry in _read_jsonl(path)}


@lru_cache(maxsize=None)
def load_func_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """Function docs (BFCL format) of one multi-turn backend class."""
    if class_name not in FUNC_DOC_FILES:
        raise NoNetworkError(f"BFCL backend {class_name!r} is not available offline (it needs the network or a hub model).")
    path = data_root() / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]
    return tuple(_read_jsonl(path))

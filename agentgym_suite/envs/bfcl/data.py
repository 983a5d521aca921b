"""Locate and read the BFCL v4 data shipped inside the ``bfcl-eval`` wheel.

The wheel is imported lazily; when it is missing a :class:`BackendNotInstalledError` names
the exact install command (the package's pinned dependency set is not installed on purpose).
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

from agentgym_suite.core.errors import BackendNotInstalledError, NoNetworkError

BFCL_VERSION = "2026.3.23"
INSTALL_COMMAND = f"pip install --no-deps bfcl-eval=={BFCL_VERSION} mpmath"

MULTI_TURN = ("base", "miss_func", "miss_param", "long_context")
SINGLE_TURN = (
    "simple", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "irrelevance", "live_irrelevance", "live_relevance",
)
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
AGENTIC = WEB_SEARCH + MEMORY
"""The agentic categories: one question answered in words, checked for the expected answer."""
FORMAT_SENSITIVITY = "format_sensitivity"
"""Single-turn entries re-run under 26 prompt formats (prompting style only, not in the overall score)."""
CATEGORIES = MULTI_TURN + SINGLE_TURN + AGENTIC + (FORMAT_SENSITIVITY,)
NO_CALL_EXPECTED = ("irrelevance", "live_irrelevance")
CALL_EXPECTED_ANY = ("live_relevance",)
MEMORY_SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
"""bfcl-eval's memory scenarios, in the order it builds the memory test cases."""

_FILE_STEM = {c: f"multi_turn_{c}" for c in MULTI_TURN}
_FILE_STEM.update({c: c for c in SINGLE_TURN})
_FILE_STEM["simple"] = "simple_python"
_FILE_STEM.update({c: "web_search" for c in WEB_SEARCH})
_FILE_STEM.update({c: "memory" for c in MEMORY})

UPSTREAM_NAMES = {c: f"multi_turn_{c}" for c in MULTI_TURN}
UPSTREAM_NAMES.update({c: c for c in SINGLE_TURN + AGENTIC})
UPSTREAM_NAMES["simple"] = "simple_python"
UPSTREAM_NAMES[FORMAT_SENSITIVITY] = FORMAT_SENSITIVITY
"""Category name here -> bfcl-eval's test category name (its score files and leaderboard columns)."""

FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
"""Backend class -> function-doc file (multi-turn backends, web search, the three memory backends)."""


def is_multi_turn(category: str) -> bool:
    """True for the four multi-turn categories."""
    return category in MULTI_TURN


def is_agentic(category: str) -> bool:
    """True for the web-search and memory categories."""
    return category in AGENTIC


def check_category(category: str) -> str:
    """Return ``category`` when supported; explain what to pick otherwise."""
    if category in CATEGORIES:
        return category
    if category == "web_search":
        raise ValueError("BFCL's web search comes in two categories: web_search_base and web_search_no_snippet.")
    if category == "memory":
        raise ValueError(f"BFCL's memory comes in one category per backend: {', '.join(MEMORY)}.")
    raise ValueError(f"Unknown BFCL category {category!r}; choose one of {', '.join(CATEGORIES)}.")


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


def upstream_id(category: str, entry_id: str) -> str:
    """The id bfcl-eval gives an entry of an agentic category (``web_search_3`` ->
    ``web_search_no_snippet_3``, ``memory_0-customer-0`` -> ``memory_kv_0-customer-0``)."""
    if category in WEB_SEARCH:
        return entry_id.replace("web_search", category, 1)
    if category in MEMORY:
        return entry_id.replace("memory", category, 1)
    return entry_id


@cache
def load_questions(category: str) -> dict[str, dict[str, Any]]:
    """Test entries of ``category`` by id, in file order (agentic ids renamed as bfcl-eval does)."""
    if check_category(category) == FORMAT_SENSITIVITY:
        from agentgym_suite.envs.bfcl.format_sensitivity import entries

        return {key: entry for key, (entry, _) in entries().items()}
    path = data_root() / f"BFCL_v4_{_FILE_STEM[check_category(category)]}.json"
    return {upstream_id(category, entry["id"]): entry for entry in _read_jsonl(path)}


@cache
def load_answer_records(category: str) -> dict[str, dict[str, Any]]:
    """Whole possible-answer records of ``category`` by id (web search keeps its hop sources there)."""
    path = data_root() / "possible_answer" / f"BFCL_v4_{_FILE_STEM[check_category(category)]}.json"
    if not path.exists():
        return {}
    return {upstream_id(category, entry["id"]): entry for entry in _read_jsonl(path)}


def load_answers(category: str) -> dict[str, Any]:
    """Ground truth of ``category`` by id (empty for categories without a possible-answer file)."""
    if check_category(category) == FORMAT_SENSITIVITY:
        from agentgym_suite.envs.bfcl.format_sensitivity import entries

        return {key: answer for key, (_, answer) in entries().items()}
    return {key: record["ground_truth"] for key, record in load_answer_records(category).items()}


@cache
def load_memory_prereqs(category: str, scenario: str) -> tuple[dict[str, Any], ...]:
    """The conversations that fill a memory backend before a scenario's questions, in order,
    with bfcl-eval's ids (``memory_kv_prereq_0-customer-0`` ...)."""
    if category not in MEMORY or scenario not in MEMORY_SCENARIOS:
        raise ValueError(f"no memory prerequisites for category {category!r}, scenario {scenario!r}.")
    path = data_root() / "memory_prereq_conversation" / f"memory_{scenario}.json"
    entries = []
    for entry in _read_jsonl(path):
        entry = dict(entry, id=upstream_id(category, entry["id"]))
        entries.append(entry)
    return tuple(entries)


@cache
def load_func_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """Function docs (BFCL format) of one multi-turn backend class."""
    if class_name not in FUNC_DOC_FILES:
        raise NoNetworkError(f"BFCL backend {class_name!r} is not available offline (it needs the network or a hub model).")
    path = data_root() / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]
    return tuple(_read_jsonl(path))

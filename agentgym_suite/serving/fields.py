"""How the suite's ``info`` travels in a wire observation (no server package needed: the
client side, :mod:`~agentgym_suite.serving.remote_env`, reads it too)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

STRUCTURED_KEYS = ("task_id", "task", "won", "score", "action_valid", "turn", "admissible_actions", "tools")
"""Info keys that travel as fields of :class:`SuiteObservation` rather than inside ``info``."""


def to_jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data: dataclasses and pydantic models become dicts, tuples and sets
    lists, numpy scalars and arrays Python numbers and lists; anything else its ``str``."""
    if depth > 64:
        return str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value), depth + 1)
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump(), depth + 1)
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return to_jsonable(value.tolist(), depth + 1)
    return str(value)


def info_from_observation(observation: dict[str, Any]) -> dict[str, Any]:
    """The suite ``info`` dict a wire observation (its JSON fields) carries."""
    info = dict(observation.get("info") or {})
    for key in STRUCTURED_KEYS:
        if key in observation:
            info[key] = observation[key]
    return info

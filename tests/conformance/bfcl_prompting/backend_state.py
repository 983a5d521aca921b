"""A digest of BFCL backend instances' public state, shared by the multi-turn case generator and its test.

Tuples, lists and dicts keep their kind (a tuple stored where the ground truth stores a list is a
different state, as bfcl-eval's state checker sees it); objects are read through their attributes
(a file system's parent links skipped); datetimes, which record when a file was written, are masked.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any


def tagged(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON with its Python kind kept."""
    if depth > 40:
        raise ValueError("state nested deeper than 40 levels")
    if isinstance(value, datetime):
        return "<datetime>"
    if isinstance(value, tuple):
        return {"__tuple__": [tagged(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return [tagged(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[tagged(k, depth + 1), tagged(v, depth + 1)] for k, v in value.items()]}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "__dict__"):
        return {"__object__": type(value).__name__,
                "attributes": tagged({k: v for k, v in vars(value).items() if k != "parent"}, depth + 1)}
    return repr(value)


def state_digest(instances: dict[str, Any]) -> str:
    """SHA-256 of every instance's public attributes, by class name."""
    state = {name: tagged({k: v for k, v in vars(instance).items() if not k.startswith("_")})
             for name, instance in sorted(instances.items())}
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode("utf-8")).hexdigest()


def agentic_state(instance: Any) -> Any:
    """A web-search or memory backend's public state as JSON with Python kinds kept (:func:`tagged`).

    Paths (where a memory backend writes its snapshots) differ between two runs and are left out; a
    vector store is read through its own ``export()`` (its FAISS index has no comparable form)."""
    from pathlib import PurePath

    state = {}
    for key, value in sorted(vars(instance).items()):
        if key.startswith("_") or isinstance(value, PurePath):
            continue
        state[key] = tagged(value.export() if callable(getattr(value, "export", None)) else value)
    return state

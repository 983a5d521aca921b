"""The requests an episode sent to a server, as its record keeps them (``Turn.request``).

Each turn's request holds the whole conversation again, so records keep every message (and
the list of tool schemas) in full the first time an episode sends it and as ``{"sha256": …}``
(a hash of the full value) every later time. :func:`expand_requests` rebuilds the exact
requests from a trajectory's turns.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

REF_KEY = "sha256"
"""The one key of a reference to a message or tool list sent earlier in the episode."""


def digest(value: Any) -> str:
    """A short content hash of a JSON value (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class RequestLog:
    """Compacts the requests of one episode (keep one per episode, in turn order)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def compact(self, request: dict[str, Any] | None) -> dict[str, Any] | None:
        """``request`` with messages and tools sent before in this episode replaced by references."""
        if not isinstance(request, dict):
            return None
        out = dict(request)
        if isinstance(out.get("messages"), list):
            out["messages"] = [self._ref(m) for m in out["messages"]]
        if out.get("tools"):
            out["tools"] = self._ref(out["tools"])
        return out

    def _ref(self, value: Any) -> Any:
        key = digest(value)
        if key in self.seen:
            return {REF_KEY: key}
        self.seen.add(key)
        return value


def expand_requests(turns: Iterable[Any]) -> list[dict[str, Any] | None]:
    """The full request of each turn (None where a turn recorded none), references resolved.

    Raises:
        ValueError: when a reference points at nothing recorded before it (a damaged record).
    """
    known: dict[str, Any] = {}
    out: list[dict[str, Any] | None] = []
    for turn in turns:
        request = getattr(turn, "request", None)
        if not isinstance(request, dict):
            out.append(None)
            continue
        full = dict(request)
        if isinstance(request.get("messages"), list):
            full["messages"] = [_resolve(m, known) for m in request["messages"]]
        if "tools" in request:
            full["tools"] = _resolve(request["tools"], known)
        out.append(full)
    return out


def _resolve(value: Any, known: dict[str, Any]) -> Any:
    if isinstance(value, dict) and set(value) == {REF_KEY}:
        key = value[REF_KEY]
        if key not in known:
            raise ValueError(f"the request record refers to {key}, which no earlier turn of the episode holds.")
        return known[key]
    known[digest(value)] = value
    return value

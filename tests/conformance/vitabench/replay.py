"""Replay rules shared by the VitaBench regenerate script (upstream's side) and the test (ours).

Standard library only: the regenerate script imports it inside upstream's virtualenv.

A sequence is a list of ``[tool name, arguments]``. ``"$NEWk"`` anywhere in an argument
stands for the id of the k-th record the sequence created (upstream draws new ids from the
clock, so ids are compared by creation order); an id not created yet stays ``"$NEWk"``. In
results and database dumps every created id is written back as ``"$NEWk"``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Callable

PLACEHOLDER = re.compile(r"\$NEW(\d+)")
INLINE_LIMIT = 300
"""Results up to this many characters are stored whole; longer ones as length, head and hash."""


def resolve(value: Any, created: list[str]) -> Any:
    """``value`` with each ``$NEWk`` replaced by the k-th created id (when there is one)."""
    if isinstance(value, str):
        return PLACEHOLDER.sub(lambda m: created[int(m.group(1)) - 1] if int(m.group(1)) <= len(created) else m.group(0), value)
    if isinstance(value, list):
        return [resolve(v, created) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, created) for k, v in value.items()}
    return value


def mask(text: str, created: list[str]) -> str:
    """``text`` with each created id written as its placeholder."""
    for k, rid in enumerate(created, start=1):
        text = text.replace(rid, f"$NEW{k}")
    return text


def digest(text: str | None) -> Any:
    """A result as stored: whole when short, else length, head and sha256."""
    if text is None or len(text) <= INLINE_LIMIT:
        return text
    return {"len": len(text), "head": text[:120], "sha256": hashlib.sha256(text.encode()).hexdigest()}


def canonical_tables(tables: dict[str, dict[str, Any]], created: list[str]) -> str:
    """The order/book/reservation tables as sorted JSON, created ids masked."""
    masked = json.loads(mask(json.dumps(tables, ensure_ascii=False, default=str), created))
    return json.dumps(masked, ensure_ascii=False, sort_keys=True, default=str)


def run_sequence(calls: list[list[Any]], call: Callable[[str, dict[str, Any]], str | None],
                 table_keys: Callable[[], set[str]]) -> tuple[list[Any], list[str]]:
    """Play ``calls`` with ``call(name, arguments)``; return the stored results and the created ids."""
    created: list[str] = []
    results = []
    for name, arguments in calls:
        before = table_keys()
        text = call(name, resolve(arguments, created))
        created.extend(sorted(table_keys() - before))
        results.append(digest(mask(text, created) if isinstance(text, str) else text))
    return results, created

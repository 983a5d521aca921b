"""How recorded τ² tool schemas are compared: one home for the regeneration script (run with upstream's
code, outside the project) and the test (run with the suite's). Standard library only."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_hash(schema: dict[str, Any]) -> str:
    """SHA-256 of ``schema`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def blank_descriptions(value: Any) -> Any:
    """``value`` with every ``description`` text replaced by ``"<text>"`` (the layout only, no upstream prose)."""
    if isinstance(value, dict):
        return {k: "<text>" if k == "description" and isinstance(v, str) else blank_descriptions(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [blank_descriptions(v) for v in value]
    return value

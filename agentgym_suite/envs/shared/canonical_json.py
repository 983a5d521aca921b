"""One canonical JSON text per value, so tool arguments and results compare equal however they were written."""

from __future__ import annotations

import json
from typing import Any


def canonical(value: Any) -> str:
    """Canonical JSON text of a value (sorted keys, integral floats as ints)."""
    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v
    return json.dumps(norm(value), sort_keys=True, ensure_ascii=False, default=str)

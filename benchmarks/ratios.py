"""One machine-readable line per headline ratio, so ``run_all.py`` can gather every
benchmark's ratios into one table. Each script still prints its own human-readable table."""

from __future__ import annotations

import json

PREFIX = "RATIO\t"


def report_ratio(name: str, value: float, target: str, detail: str = "") -> None:
    """Print ``RATIO<TAB>{json}``; ``target`` reads like ``>= 3x`` or ``<= 1.2x``."""
    print(PREFIX + json.dumps({"name": name, "value": round(float(value), 3), "target": target, "detail": detail}),
          flush=True)


def parse_ratios(output: str) -> list[dict]:
    """The ratio records in a script's output."""
    return [json.loads(line[len(PREFIX):]) for line in output.splitlines() if line.startswith(PREFIX)]


def meets(value: float, target: str) -> bool | None:
    """Whether ``value`` meets ``target`` (``>= X`` / ``<= X``, an optional trailing ``x`` or ``%``)."""
    parts = target.replace("x", "").replace("%", "").split()
    if len(parts) != 2 or parts[0] not in (">=", "<="):
        return None
    bound = float(parts[1]) / (100 if target.endswith("%") else 1)
    return value >= bound if parts[0] == ">=" else value <= bound

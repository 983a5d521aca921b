"""Success rates with Wilson score intervals, computed from saved episodes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

Z95 = 1.959963984540054
"""The two-sided 95 % normal quantile."""


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (Wilson 1927): ``(low, high)``.

    Unlike the normal-approximation interval it stays inside [0, 1] and is not degenerate at
    0 or n successes. ``n == 0`` gives ``(0.0, 1.0)``.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got successes={successes}, n={n}.")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def episodes_success(trajectories: Path) -> dict[str, Any]:
    """Won/total episodes of an evaluation's ``trajectories.jsonl`` (the last record of each
    episode key counts) with the success rate and its Wilson 95 % interval."""
    latest: dict[str, bool] = {}
    with open(trajectories, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                key = record.get("key") or f"{record.get('task_id')}#{record.get('attempt', 0)}"
                latest[str(key)] = bool(record.get("won"))
    n, won = len(latest), sum(latest.values())
    low, high = wilson_interval(won, n)
    return {"episodes": n, "won": won, "success_rate": won / n if n else 0.0, "ci_low": low, "ci_high": high}


def intervals_overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two ``episodes_success`` results' intervals overlap."""
    return not (a["ci_high"] < b["ci_low"] or b["ci_high"] < a["ci_low"])

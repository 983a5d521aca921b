"""VitaBench 2.0 aggregate metrics with the official harness's denominators.

Upstream plays a whole user sequence per simulation and reports, besides the per-sequence
average, *subtask-level* pass^k / pass@k / average@k: every (user, subtask position) is one
evaluation unit observed over ``num_trials`` trials, a unit succeeds in a trial when its reward is
exactly 1.0, and a trial that crashed (no result written) counts 0.0 for that unit. A user
contributes as many units as the widest subtask position any of its trials scored (a user with
no scored trial at all contributes none), and the personalize/proactive split averages the scored
subtask rewards by whether ``skill_tested`` names ``proactive``.

Here each subtask is its own episode, so the input is one row per scored subtask episode:
``{"sequence_id", "subtask_index", "trial", "reward", "skill_tested"}``. The numbers are checked
against upstream's ``compute_metrics`` in ``tests/conformance/test_vitabench_v2_metrics.py``.
"""

from __future__ import annotations

from collections import defaultdict
from math import comb
from typing import Any, Iterable, Mapping


def pass_hat(n: int, c: int, k: int) -> float:
    """Chance that k trials drawn from n (c successful) all succeed."""
    return comb(c, k) / comb(n, k)


def pass_at(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials drawn from n (c successful) succeeds; 0 when n < k."""
    if n < k or c > n:
        return 0.0
    return 1.0 - comb(n - c, k) / comb(n, k) if n - c >= k else 1.0


def _skills(value: Any) -> list[str]:
    if isinstance(value, str):
        return [s for s in value.split(",") if s]
    return [str(s) for s in value or []]


def subtask_metrics(rows: Iterable[Mapping[str, Any]], num_trials: int) -> dict[str, Any]:
    """Upstream's subtask-level pass^k, pass@k and average@k (k = 1..num_trials) and unit count.

    Empty when ``num_trials <= 1`` or there are no rows, as upstream reports nothing then.
    """
    if num_trials <= 1:
        return {}
    seen: dict[tuple[str, int], dict[int, float]] = defaultdict(dict)
    widest: dict[str, int] = {}
    for row in rows:
        sequence, index = str(row["sequence_id"]), int(row["subtask_index"])
        seen[(sequence, index)][int(row.get("trial") or 0)] = float(row["reward"])
        widest[sequence] = max(widest.get(sequence, 0), index + 1)
    units = [[seen.get((sequence, i), {}).get(t, 0.0) for t in range(num_trials)]
             for sequence, width in widest.items() for i in range(width)]
    if not units:
        return {}
    out: dict[str, Any] = {"subtask_pass_hat_ks": {}, "subtask_pass_at_n": {}, "subtask_average_at_n": {}}
    for k in range(1, num_trials + 1):
        counts = [(len(u), sum(1 for r in u if r == 1.0)) for u in units]
        out["subtask_pass_hat_ks"][str(k)] = sum(pass_hat(n, c, k) for n, c in counts) / len(units)
        out["subtask_pass_at_n"][str(k)] = sum(pass_at(n, c, k) for n, c in counts) / len(units)
        out["subtask_average_at_n"][str(k)] = sum(sum(u) / len(u) for u in units) / len(units)
    out["subtask_num_units"] = len(units)
    return out


def skill_split(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean scored subtask reward and count, split into ``personalize`` and ``proactive``."""
    groups: dict[str, list[float]] = {"personalize": [], "proactive": []}
    for row in rows:
        groups["proactive" if "proactive" in _skills(row.get("skill_tested")) else "personalize"].append(float(row["reward"]))
    return {name: {"avg_reward": sum(values) / len(values), "count": len(values)} for name, values in groups.items() if values}


def personalization_metrics(rows: Iterable[Mapping[str, Any]], num_trials: int | None = None) -> dict[str, Any]:
    """Subtask-level metrics and the skill split; ``num_trials`` defaults to the most trials any subtask had."""
    rows = list(rows)
    if not rows:
        return {}
    if num_trials is None:
        per_unit: dict[tuple[str, int], set[int]] = defaultdict(set)
        for row in rows:
            per_unit[(str(row["sequence_id"]), int(row["subtask_index"]))].add(int(row.get("trial") or 0))
        num_trials = max(max(t) + 1 for t in per_unit.values())
    return {"num_trials": num_trials, **subtask_metrics(rows, num_trials), "skill_split_metrics": skill_split(rows)}


__all__ = ["pass_at", "pass_hat", "personalization_metrics", "skill_split", "subtask_metrics"]

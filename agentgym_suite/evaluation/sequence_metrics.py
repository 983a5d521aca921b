"""Avg@k, Pass@k and Pass^k for benchmarks whose tasks form per-user sequences (VitaBench 2.0).

An env marks such tasks with ``info["sequence_id"]`` (the user). As upstream computes them
(``vita.metrics.agent_metrics``): each subtask of each user is a unit observed over its
attempts, a success being a reward of exactly 1. For a unit with ``n`` attempts, ``c`` of them
successes, ``Avg@k`` is the mean reward over its attempts, ``Pass@k`` and ``Pass^k`` the
unbiased estimators of :mod:`~agentgym_suite.evaluation.metrics`. A user's numbers average
their units, the overall numbers average every unit (upstream's subtask-level metrics), and
the ``user_level`` numbers treat each user and attempt as one run whose reward is the mean of
its subtask rewards (upstream's task-level metrics). Units with fewer than ``k`` attempts are
left out of Pass@k/Pass^k; unscorable episodes are left out entirely.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from agentgym_suite.evaluation.metrics import pass_at_k, pass_hat_k
from agentgym_suite.rollout.records import Trajectory


def _final(record: Trajectory) -> dict[str, Any]:
    return record.turns[-1].info if record.turns else {}


def sequence_of(record: Trajectory) -> str | None:
    """The sequence (user) an episode belongs to, from its final info; None when it reported none."""
    value = _final(record).get("sequence_id")
    return str(value) if value is not None else None


def _rates(units: list[list[float]], k: int) -> dict[str, float | None]:
    avg = [sum(r) / len(r) for r in units if r]
    counted = [(len(r), sum(1 for x in r if x == 1.0)) for r in units if len(r) >= k]
    return {
        "avg@k": sum(avg) / len(avg) if avg else None,
        "pass@k": sum(pass_at_k(n, c, k) for n, c in counted) / len(counted) if counted else None,
        "pass^k": sum(pass_hat_k(n, c, k) for n, c in counted) / len(counted) if counted else None,
    }


def sequence_summary(records: Iterable[Trajectory], k: int) -> dict[str, Any] | None:
    """Per-user and overall Avg@k/Pass@k/Pass^k (see the module docstring), or None without sequence ids.

    ``records`` should be the scorable episodes. Returns ``{"k", "by_sequence": {user: {"subtasks",
    "episodes", "avg@k", "pass@k", "pass^k"}}, "overall": {..., "subtasks", "users"}, "user_level": {...}}``.
    """
    rewards: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_attempt: dict[tuple[str, int], list[float]] = defaultdict(list)
    for record in records:
        sequence = sequence_of(record)
        if sequence is None:
            continue
        reward = 0.0 if record.failed else float(record.score)
        rewards[sequence][record.task_id].append(reward)
        by_attempt[(sequence, record.attempt)].append(reward)
    if not rewards:
        return None
    by_sequence = {}
    for sequence, units in sorted(rewards.items()):
        values = list(units.values())
        by_sequence[sequence] = {"subtasks": len(values), "episodes": sum(len(v) for v in values), **_rates(values, k)}
    every = [v for units in rewards.values() for v in units.values()]
    runs: dict[str, list[float]] = defaultdict(list)
    for (sequence, _), values in sorted(by_attempt.items()):
        runs[sequence].append(sum(values) / len(values))
    return {
        "k": k,
        "by_sequence": by_sequence,
        "overall": {"subtasks": len(every), "users": len(rewards), **_rates(every, k)},
        "user_level": _rates(list(runs.values()), k),
    }


__all__ = ["sequence_of", "sequence_summary"]

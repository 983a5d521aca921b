"""Which tasks an evaluation runs, and the seed of each episode — both fixed by ``--seed``.

Tasks are the first ``episodes`` ids of a seeded permutation of ``env.unwrapped.task_ids()``,
so a larger ``--episodes`` with the same seed extends the earlier selection (a resumed or
enlarged run reuses every finished episode). Each (task, attempt) gets its own seed from
:func:`~agentgym_suite.rollout.seeding.episode_seed` (the run seed, the task id and the attempt
index only), the derivation training and held-out evaluation use too. :func:`select_tasks` lives with
that seed rule (:mod:`~agentgym_suite.rollout.seeding`, so the fidelity report of a method on a lower
floor picks the same tasks) and is re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym_suite.rollout.seeding import episode_seed, select_tasks

__all__ = ["EpisodePlan", "plan_episodes", "select_tasks"]


@dataclass(frozen=True)
class EpisodePlan:
    """One episode to run: a task, its attempt index and the reset seed."""

    task_id: str
    attempt: int
    seed: int


def plan_episodes(task_ids: list[str], k: int, seed: int) -> list[EpisodePlan]:
    """Every (task, attempt) pair, task by task: ``k`` attempts for each selected task."""
    if k < 1:
        raise ValueError(f"--k must be >= 1, got {k}.")
    return [EpisodePlan(t, a, episode_seed(seed, t, a)) for t in task_ids for a in range(k)]

"""Which tasks an evaluation runs, and the seed of each episode — both fixed by ``--seed``.

Tasks are the first ``episodes`` ids of a seeded permutation of ``env.unwrapped.task_ids()``,
so a larger ``--episodes`` with the same seed extends the earlier selection (a resumed or
enlarged run reuses every finished episode). Each (task, attempt) gets its own seed from
:func:`~agentgym_suite.rollout.seeding.episode_seed` (the run seed, the task id and the attempt
index only), the derivation training and held-out evaluation use too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentgym_suite.rollout.seeding import episode_seed


@dataclass(frozen=True)
class EpisodePlan:
    """One episode to run: a task, its attempt index and the reset seed."""

    task_id: str
    attempt: int
    seed: int


def select_tasks(task_ids: list[str], episodes: int | None, seed: int) -> list[str]:
    """Return ``episodes`` task ids (all when None or larger than the split) in seeded order."""
    if episodes is not None and episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {episodes}.")
    if not task_ids:
        raise ValueError("the env has no tasks in this split; check --env-kwargs and the data directory.")
    order = np.random.default_rng(seed).permutation(len(task_ids))
    count = len(task_ids) if episodes is None else min(episodes, len(task_ids))
    return [str(task_ids[i]) for i in order[:count]]


def plan_episodes(task_ids: list[str], k: int, seed: int) -> list[EpisodePlan]:
    """Every (task, attempt) pair, task by task: ``k`` attempts for each selected task."""
    if k < 1:
        raise ValueError(f"--k must be >= 1, got {k}.")
    return [EpisodePlan(t, a, episode_seed(seed, t, a)) for t in task_ids for a in range(k)]

"""The one derivation of an episode's reset seed from the run seed, the task and the attempt.

Every place that plays episodes of a seeded run asks :func:`episode_seed`: training (the seed a
GRPO group of a task shares), held-out evaluation during training, ``agentgym eval``, the demo
and fidelity, and the imagined attempts of an agent that tries a task privately first. So a task played under the same run
seed and attempt index resets to the same state wherever it is played: a held-out evaluation
inside training and ``agentgym eval --seed S`` on the same tasks play the same episodes.

Which tasks a seeded run plays is fixed the same way (:func:`select_tasks`): ``agentgym eval``
and the world-model fidelity report pick the same tasks for the same seed.

The seed depends on nothing else (not on which other tasks run, their order or the batch), so a
larger or resumed run reuses the episodes it already played.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["episode_seed", "select_tasks"]


def episode_seed(run_seed: int, task_id: str | None, attempt: int = 0) -> int:
    """A 31-bit reset seed for one episode: attempt ``attempt`` at task ``task_id`` of a run seeded
    with ``run_seed`` (``task_id`` None: an env's own seeded pick of a task, keyed as ``""``).

    Raises:
        ValueError: a negative attempt index.
    """
    if attempt < 0:
        raise ValueError(f"attempt must be >= 0, got {attempt}.")
    key = "" if task_id is None else str(task_id)
    state = np.random.SeedSequence([int(run_seed) & 0xFFFFFFFF, zlib.crc32(key.encode("utf-8")), int(attempt)])
    return int(state.generate_state(1)[0] & 0x7FFFFFFF)


def select_tasks(task_ids: list[str], episodes: int | None, seed: int) -> list[str]:
    """Return ``episodes`` task ids (all when None or larger than the split) in seeded order: the
    first ids of a seeded permutation, so a larger ``episodes`` with the same seed extends the
    earlier selection."""
    if episodes is not None and episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {episodes}.")
    if not task_ids:
        raise ValueError("the env has no tasks in this split; check --env-kwargs and the data directory.")
    order = np.random.default_rng(seed).permutation(len(task_ids))
    count = len(task_ids) if episodes is None else min(episodes, len(task_ids))
    return [str(task_ids[i]) for i in order[:count]]

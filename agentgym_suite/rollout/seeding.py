"""The one derivation of an episode's reset seed from the run seed, the task and the attempt.

Every place that plays episodes of a seeded run asks :func:`episode_seed`: training (the seed a
GRPO group of a task shares), held-out evaluation during training, ``agentgym eval``, the demo
and fidelity, and the rehearsing agent's imagined attempts. So a task played under the same run
seed and attempt index resets to the same state wherever it is played: a held-out evaluation
inside training and ``agentgym eval --seed S`` on the same tasks play the same episodes.

The seed depends on nothing else (not on which other tasks run, their order or the batch), so a
larger or resumed run reuses the episodes it already played.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["episode_seed"]


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

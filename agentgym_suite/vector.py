"""Vectorised envs: ``make_vec(env_id, n)`` with Gymnasium's ``SyncVectorEnv``/``AsyncVectorEnv``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv


def make_vec(
    env_id: str,
    n: int,
    *,
    asynchronous: bool = False,
    autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
    context: str | None = None,
    **kwargs: Any,
) -> SyncVectorEnv | AsyncVectorEnv:
    """Build ``n`` copies of ``env_id`` as a Gymnasium vector env.

    Args:
        env_id: a registered id such as ``"ALFWorld-v0"``.
        n: number of sub-envs (>= 1).
        asynchronous: one worker process per sub-env (worth it for slow backends such as
            ScienceWorld's JVM or ALFWorld's planner); otherwise all step in this process.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        context: multiprocessing start method for async workers (default: Gymnasium's).
        **kwargs: passed to ``gymnasium.make`` for every sub-env.

    Text observations are returned as a tuple of strings, one per sub-env.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}.")
    import agentgym_suite  # noqa: F401  (registers the ids inside worker processes too)

    def factory() -> gym.Env:
        import agentgym_suite  # noqa: F401

        return gym.make(env_id, **kwargs)

    fns = [factory for _ in range(n)]
    if asynchronous:
        return AsyncVectorEnv(fns, shared_memory=False, copy=False, context=context, autoreset_mode=autoreset_mode)
    return SyncVectorEnv(fns, copy=False, autoreset_mode=autoreset_mode)

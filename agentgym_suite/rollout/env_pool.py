"""Envs made by id and reused from run to run, with untrusted ones replaced.

An env whose episode failed on the env side (``error_stage`` reset, step or env: it raised, hung
or reported a crash) may hold a broken simulator, so it is closed and a fresh one is made the
next time the pool is asked for envs; so is an env whose step timed out
(:func:`~agentgym_suite.core.guards.needs_replacement`).
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym

from agentgym_suite.core.guards import check_timeout, guard_env, needs_replacement
from agentgym_suite.rollout.records import ENV_ERROR_STAGES, Trajectory


class EnvPool:
    """Envs by ``(env_id, kwargs)``, made with ``gymnasium.make`` on first use and reused.

    Args:
        step_timeout: seconds one ``env.step`` may take (each env is wrapped in
            :class:`~agentgym_suite.core.guards.StepTimeout`); None: no limit.
    """

    def __init__(self, step_timeout: float | None = None) -> None:
        self.step_timeout = check_timeout(step_timeout)
        self._envs: dict[tuple[str, str], list[gym.Env]] = {}
        self._untrusted: set[int] = set()

    def get(self, env_id: str, n: int, env_kwargs: dict[str, Any] | None = None) -> list[gym.Env]:
        """``n`` envs of ``env_id`` made with ``env_kwargs``: reused ones first, untrusted ones replaced."""
        import agentgym_suite  # noqa: F401  (registers the ids)

        kwargs = dict(env_kwargs or {})
        pool = self._envs.setdefault((env_id, repr(sorted(kwargs.items()))), [])
        for index, env in enumerate(pool):
            if id(env) in self._untrusted or needs_replacement(env):
                self._untrusted.discard(id(env))
                close_quietly(env)
                pool[index] = self._make(env_id, kwargs)
        while len(pool) < n:
            pool.append(self._make(env_id, kwargs))
        return pool[:n]

    def distrust(self, envs: Sequence[gym.Env], trajectories: Sequence[Trajectory]) -> None:
        """Mark the envs whose episode failed on the env side; the next :meth:`get` replaces them."""
        for env, trajectory in zip(envs, trajectories):
            if trajectory.error_stage in ENV_ERROR_STAGES:
                self._untrusted.add(id(env))

    def close(self) -> None:
        """Close every env of the pool."""
        for pool in self._envs.values():
            for env in pool:
                close_quietly(env)
        self._envs.clear()
        self._untrusted.clear()

    def _make(self, env_id: str, kwargs: dict[str, Any]) -> gym.Env:
        return guard_env(gym.make(env_id, **kwargs), self.step_timeout)


def close_quietly(env: gym.Env) -> None:
    """Close ``env``, ignoring errors (closing a crashed backend may fail again; nothing is left to save)."""
    try:
        env.close()
    except Exception:  # see the docstring
        pass

"""Envs made by id (or by a factory) and reused from run to run, with untrusted ones replaced.

Where the envs live is the pool's executor (:mod:`~agentgym_suite.rollout.workers`), chosen by
``workers`` (the ``env_workers`` setting) when envs are first asked for: inline, worker
processes or Ray actors; unset, the env's own default for the number of envs live at once.

An env whose episode failed on the env side (``error_stage`` reset, step or env: it raised, hung
or reported a crash) may hold a broken backend, so it is closed and a fresh one is made the
next time the pool is asked for envs; so is an env whose step timed out
(:func:`~agentgym_suite.core.guards.needs_replacement`) and every env of a worker that died (a
fresh worker is started for them).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

import gymnasium as gym

from agentgym_suite.core.guards import check_timeout
from agentgym_suite.rollout.records import ENV_ERROR_STAGES, Trajectory
from agentgym_suite.rollout.workers import EnvExecutor, EnvWorkers, env_default, make_executor, parse_env_workers
from agentgym_suite.rollout.workers.host import close_quietly

__all__ = ["EnvPool", "MakeEnv", "close_quietly"]


class MakeEnv:
    """A picklable factory: ``gymnasium.make`` of ``env_id``'s spec with ``kwargs`` (the spec travels
    with it, so ids registered only in this process work in worker processes too)."""

    def __init__(self, env_id: str, kwargs: dict[str, Any] | None = None) -> None:
        import agentgym_suite  # noqa: F401  (registers the ids)

        self.spec = gym.spec(env_id)
        self.kwargs = dict(kwargs or {})

    def __call__(self) -> gym.Env:
        return gym.make(self.spec, **self.kwargs)


class EnvPool:
    """Envs by ``(env_id, kwargs)`` (or by factory), made on first use and reused.

    Args:
        step_timeout: seconds one ``env.step`` may take (each env is wrapped in
            :class:`~agentgym_suite.core.guards.StepTimeout`); None: no limit.
        workers: the ``env_workers`` setting: the parsed value a config or command holds (used as
            it is), or for direct library use a raw one (``1``/``inline``, ``N`` processes, ``ray``,
            parsed here by :func:`~agentgym_suite.rollout.workers.parse_env_workers`); None: the
            env's default.
        live_envs: how many envs will be played at once, when the first request asks for fewer
            (an evaluation that first makes one env to list its tasks); picks the env's default.
    """

    def __init__(self, step_timeout: float | None = None, *, workers: EnvWorkers | str | int | None = None,
                 live_envs: int | None = None) -> None:
        self.step_timeout = check_timeout(step_timeout)
        self.workers: EnvWorkers | None = parse_env_workers(workers)
        self.live_envs = live_envs
        self.executor: EnvExecutor | None = None
        """Where the envs live; chosen at the first :meth:`get`."""
        self._groups: dict[Hashable, tuple[Callable[[], gym.Env], list[Any]]] = {}
        self._untrusted: set[int] = set()

    def get(self, env_id: str, n: int, env_kwargs: dict[str, Any] | None = None) -> list[Any]:
        """``n`` envs of ``env_id`` made with ``env_kwargs``: reused ones first, untrusted ones replaced."""
        kwargs = dict(env_kwargs or {})
        key = (env_id, repr(sorted(kwargs.items())))
        factory = self._groups[key][0] if key in self._groups else MakeEnv(env_id, kwargs)
        return self._get(key, factory, n, env_id)

    def get_made(self, make: Callable[[], gym.Env], n: int, *, env_id: str = "") -> list[Any]:
        """``n`` envs made by ``make`` (a zero-argument factory; picklable, or a closure cloudpickle
        can ship, when the envs live in workers); ``env_id`` picks the env's default executor."""
        return self._get(("factory", id(make)), make, n, env_id)

    def distrust(self, envs: Sequence[Any], trajectories: Sequence[Trajectory]) -> None:
        """Mark the envs whose episode failed on the env side; the next :meth:`get` replaces them."""
        for env, trajectory in zip(envs, trajectories):
            if trajectory.error_stage in ENV_ERROR_STAGES:
                self._untrusted.add(id(env))

    def close(self) -> None:
        """Close every env of the pool (and its workers); returns within a few seconds."""
        executor, self.executor = self.executor, None
        self._groups.clear()
        self._untrusted.clear()
        if executor is not None:
            executor.close()

    def describe(self) -> str:
        """Where the envs live, e.g. ``inline`` or ``2 processes workers`` (``unset`` before the first :meth:`get`)."""
        return self.executor.describe() if self.executor is not None else "unset"

    def _executor_for(self, env_id: str, n: int) -> EnvExecutor:
        if self.executor is None:
            workers = self.workers or env_default(env_id, max(n, self.live_envs or 0))
            self.executor = make_executor(workers, self.step_timeout)
        return self.executor

    def _get(self, key: Hashable, factory: Callable[[], gym.Env], n: int, env_id: str) -> list[Any]:
        executor = self._executor_for(env_id, n)
        _, pool = self._groups.setdefault(key, (factory, []))
        stale = [i for i, env in enumerate(pool) if id(env) in self._untrusted or not executor.usable(env)]
        if stale:
            executor.discard([pool[i] for i in stale])
            for i in stale:
                self._untrusted.discard(id(pool[i]))
        wanted = len(stale) + max(0, n - len(pool))
        fresh = iter(executor.make(factory, wanted) if wanted else [])
        for i in stale:
            pool[i] = next(fresh)
        pool.extend(fresh)
        return pool[:n]

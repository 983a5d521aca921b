"""The executor seam: where a pool's envs live and how one turn's resets and steps reach them.

An :class:`EnvExecutor` makes envs from factories and answers batches of resets and steps, one
result per call in order, where a call that failed gives its exception. :class:`InlineEnvs`
runs them here, one after another; the worker executors send a turn's calls to all their
workers at once and gather the answers (see :mod:`~agentgym_suite.rollout.workers.remote`).

:func:`reset_envs` and :func:`step_envs` take calls on any mix of envs: plain ``gymnasium.Env``
objects go to :data:`INLINE`, envs of a worker pool to their own executor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.core.guards import guard_env, needs_replacement
from agentgym_suite.rollout.workers.calls import reset_env, step_env
from agentgym_suite.rollout.workers.host import close_quietly

ResetCall = tuple[Any, "int | None", "dict[str, Any] | None", bool]
"""``(env, seed, options, with_oracle)``."""
StepCall = tuple[Any, Any, bool]
"""``(env, action, with_oracle)``."""


class EnvExecutor(ABC):
    """Where envs live: made from zero-argument factories, reset and stepped in batches.

    Results come back in call order: :data:`~agentgym_suite.rollout.workers.calls.ResetResult` /
    :data:`~agentgym_suite.rollout.workers.calls.StepResult` tuples, or the exception a call raised
    (an env that raised, a worker that died or hung), so one broken env never fails the batch.
    """

    kind: str = ""
    """``inline``, ``processes`` or ``ray``."""

    @abstractmethod
    def make(self, factory: Callable[[], gym.Env], n: int) -> list[Any]:
        """``n`` new envs from ``factory``: ``gymnasium.Env`` objects, or handles to remote ones."""

    @abstractmethod
    def usable(self, env: Any) -> bool:
        """False once ``env`` cannot be used again (its step timed out, its worker died)."""

    @abstractmethod
    def discard(self, envs: Sequence[Any]) -> None:
        """Close ``envs`` and forget them."""

    @abstractmethod
    def reset(self, calls: Sequence[ResetCall]) -> list[Any]:
        """Reset each env; results in call order."""

    @abstractmethod
    def step(self, calls: Sequence[StepCall]) -> list[Any]:
        """Step each env; results in call order."""

    @abstractmethod
    def close(self) -> None:
        """Close every env (and worker); returns within seconds."""

    def describe(self) -> str:
        """A short description for logs, e.g. ``2 worker processes``."""
        return self.kind


class InlineEnvs(EnvExecutor):
    """Envs in this process, reset and stepped one after another (the default for pure-Python envs).

    Args:
        step_timeout: seconds one ``env.step`` may take in envs made here (see
            :class:`~agentgym_suite.core.guards.StepTimeout`); None: no limit.
    """

    kind = "inline"

    def __init__(self, step_timeout: float | None = None) -> None:
        self.step_timeout = step_timeout
        self._made: dict[int, gym.Env] = {}

    def make(self, factory: Callable[[], gym.Env], n: int) -> list[Any]:
        envs = [guard_env(factory(), self.step_timeout) for _ in range(n)]
        self._made.update((id(env), env) for env in envs)
        return envs

    def usable(self, env: Any) -> bool:
        return not needs_replacement(env)

    def discard(self, envs: Sequence[Any]) -> None:
        for env in envs:
            self._made.pop(id(env), None)
            close_quietly(env)

    def reset(self, calls: Sequence[ResetCall]) -> list[Any]:
        return [_attempt(reset_env, *call) for call in calls]

    def step(self, calls: Sequence[StepCall]) -> list[Any]:
        return [_attempt(step_env, *call) for call in calls]

    def close(self) -> None:
        """Close every env made here."""
        envs, self._made = list(self._made.values()), {}
        for env in envs:
            close_quietly(env)


def _attempt(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # a broken env is data, not a crash of the batch
        return exc


INLINE = InlineEnvs()
"""The executor of plain ``gymnasium.Env`` objects handed to the engine."""


class ExecutorHandle:
    """The engine's handle of an env that lives elsewhere (a worker, a server session): not a
    ``gymnasium.Env``, so the engine batches its calls through :attr:`executor`; ``reset``,
    ``step`` and ``close`` serve single calls the same way."""

    executor: EnvExecutor

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """One ``env.reset`` through the executor."""
        [result] = self.executor.reset([(self, seed, options, False)])
        if isinstance(result, BaseException):
            raise result
        return result[0], result[1]

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One ``env.step`` through the executor."""
        [result] = self.executor.step([(self, action, False)])
        if isinstance(result, BaseException):
            raise result
        return result[:5]

    def close(self) -> None:
        """Close the env where it lives."""
        self.executor.discard([self])


def executor_of(env: Any) -> EnvExecutor:
    """The executor that runs ``env``: its worker pool's for a remote env, :data:`INLINE` otherwise."""
    executor = getattr(env, "executor", None) if not isinstance(env, gym.Env) else None
    return executor if isinstance(executor, EnvExecutor) else INLINE


def reset_envs(calls: Sequence[ResetCall]) -> list[Any]:
    """Reset envs of any executors, each executor's share in one batch; results in call order."""
    return _dispatch(calls, "reset")


def step_envs(calls: Sequence[StepCall]) -> list[Any]:
    """Step envs of any executors, each executor's share in one batch; results in call order."""
    return _dispatch(calls, "step")


def _dispatch(calls: Sequence[tuple], op: str) -> list[Any]:
    groups: dict[int, tuple[EnvExecutor, list[int]]] = {}
    for index, call in enumerate(calls):
        executor = executor_of(call[0])
        groups.setdefault(id(executor), (executor, []))[1].append(index)
    results: list[Any] = [None] * len(calls)
    for executor, indices in groups.values():
        answers = getattr(executor, op)([calls[i] for i in indices])
        for index, answer in zip(indices, answers):
            results[index] = answer
    return results

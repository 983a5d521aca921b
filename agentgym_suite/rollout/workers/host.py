"""The envs of one worker (a process of :class:`~agentgym_suite.rollout.workers.processes.ProcessWorkers`
or a Ray actor of :class:`~agentgym_suite.rollout.workers.ray_actors.RayWorkers`), and the
requests it answers.

A request is ``(op, payload)``; the answer to a batch op is one ``(ok, value)`` pair per item,
in order, where a failed item's value is the exception (see
:func:`~agentgym_suite.rollout.workers.calls.portable_error`). Messages travel as cloudpickle
bytes, so factories may be closures and lambdas.

========  ==========================================  =========================================
op        payload                                     answer
========  ==========================================  =========================================
make      ``[(key, factory)]``                        per item: ``(EnvSpec or None, class name)``
reset     ``[(key, seed, options, with_oracle)]``     per item: ``(observation, info, oracle)``
step      ``[(key, action, with_oracle)]``            per item: ``(observation, reward, ..., oracle)``
attr      ``(key, name)``                             ``("call", None)`` or ``("value", v)``
call      ``(key, name, args, kwargs)``               the method's return value
drop      ``[key]``                                   None (those envs are closed)
close     None                                        None (every env is closed)
========  ==========================================  =========================================
"""

from __future__ import annotations

from typing import Any, Callable

import cloudpickle
import gymnasium as gym

from agentgym_suite.core.guards import guard_env
from agentgym_suite.rollout.workers.calls import RemoteEnvError, portable_error, reset_env, step_env

Outcome = tuple[bool, Any]
"""``(True, value)`` or ``(False, exception)``."""


def close_quietly(env: gym.Env) -> None:
    """Close ``env``, ignoring errors (closing a crashed backend may fail again; nothing is left to save)."""
    try:
        env.close()
    except Exception:  # see the docstring
        pass


def _attempt(fn: Callable[..., Any], *args: Any) -> Outcome:
    try:
        return True, fn(*args)
    except Exception as exc:  # a broken env is data, not a crash of the worker
        return False, portable_error(exc)


class EnvHost:
    """Envs by key, made from factories sent by the pool, each guarded by the step timeout.

    Args:
        step_timeout: seconds one ``env.step`` may take (each env is wrapped in
            :class:`~agentgym_suite.core.guards.StepTimeout`, as inline envs are); None: no limit.
    """

    def __init__(self, step_timeout: float | None = None) -> None:
        import agentgym_suite  # noqa: F401  (registers every env id in this process)

        self.step_timeout = step_timeout
        self.envs: dict[int, gym.Env] = {}
        self.closed = False
        """True after a ``close`` request: the worker should exit."""

    def handle(self, op: str, payload: Any) -> Any:
        """Answer one request (see the module docstring)."""
        if op == "make":
            return [_attempt(self._make, key, factory) for key, factory in payload]
        if op == "reset":
            return [_attempt(self._reset, *item) for item in payload]
        if op == "step":
            return [_attempt(self._step, *item) for item in payload]
        if op == "attr":
            return _attempt(self._attr, *payload)
        if op == "call":
            return _attempt(self._call, *payload)
        if op == "drop":
            for key in payload:
                env = self.envs.pop(key, None)
                if env is not None:
                    close_quietly(env)
            return None
        if op == "close":
            self.close()
            self.closed = True
            return None
        raise ValueError(f"unknown env worker request {op!r}")

    def handle_bytes(self, message: bytes) -> bytes:
        """:meth:`handle` on a cloudpickled request; the answer cloudpickled (an item whose value
        cannot be pickled is replaced by an error that says so)."""
        op, payload = cloudpickle.loads(message)
        answer = self.handle(op, payload)
        try:
            return cloudpickle.dumps(answer)
        except Exception:
            return cloudpickle.dumps(_picklable(answer))

    def close(self) -> None:
        """Close every env of this worker."""
        envs, self.envs = list(self.envs.values()), {}
        for env in envs:
            close_quietly(env)

    # ------------------------------------------------------------------ the ops
    def _env(self, key: int) -> gym.Env:
        try:
            return self.envs[key]
        except KeyError:
            raise RemoteEnvError(f"this worker holds no env {key}; the pool must make it first") from None

    def _make(self, key: int, factory: Any) -> Any:
        make = cloudpickle.loads(factory) if isinstance(factory, bytes) else factory
        old = self.envs.pop(key, None)
        if old is not None:
            close_quietly(old)
        env = guard_env(make(), self.step_timeout)
        self.envs[key] = env
        return env.spec, type(env.unwrapped).__name__

    def _reset(self, key: int, seed: int | None, options: dict[str, Any] | None, with_oracle: bool) -> Any:
        return reset_env(self._env(key), seed, options, with_oracle)

    def _step(self, key: int, action: Any, with_oracle: bool) -> Any:
        return step_env(self._env(key), action, with_oracle)

    def _attr(self, key: int, name: str) -> tuple[str, Any]:
        value = getattr(self._env(key).unwrapped, name)
        return ("call", None) if callable(value) else ("value", value)

    def _call(self, key: int, name: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        return getattr(self._env(key).unwrapped, name)(*args, **kwargs)


def _picklable(answer: Any) -> Any:
    """``answer`` with every item that cannot be pickled replaced by an error naming its type."""
    def fix(outcome: Outcome) -> Outcome:
        try:
            cloudpickle.dumps(outcome)
            return outcome
        except Exception as exc:
            kind = type(outcome[1]).__name__
            return False, portable_error(RemoteEnvError(
                f"the env's answer ({kind}) cannot be sent back from its worker process: {type(exc).__name__}: {exc}"))

    if isinstance(answer, list):
        return [fix(item) for item in answer]
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], bool):
        return fix(answer)
    return answer

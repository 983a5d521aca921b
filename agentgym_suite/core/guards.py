"""Guards around env calls that may hang: a per-step time limit.

:class:`StepTimeout` runs each ``env.step`` in a worker thread and waits at most ``seconds``.
When the limit passes, the episode ends *truncated* with ``info["error"]`` saying so, and the
wrapper is marked :attr:`StepTimeout.broken`: the inner env may still be busy in the
abandoned call, so it is never called again. Every later ``step`` answers truncated at once,
``reset`` raises :class:`EnvNeedsReplacement`, and ``close`` hands the inner env's cleanup to
a background thread so a hung backend cannot block the caller. The owner of the env (the
eval runner, the rollout engine) makes a fresh one; :func:`needs_replacement` tells when.

A Python thread cannot be killed: a step stuck in pure Python keeps its thread until it
returns. Envs that drive a subprocess (ScienceWorld's JVM) free it in their ``close``.

Usage::

    env = StepTimeout(gymnasium.make("TextWorld-v0"), seconds=30)
"""

from __future__ import annotations

import threading
from typing import Any, SupportsFloat

import gymnasium as gym

from agentgym_suite.core.errors import AgentGymError

CLOSE_WAIT_S = 5.0
"""How long :meth:`StepTimeout.close` waits for a broken env's cleanup before moving on."""


class EnvNeedsReplacement(AgentGymError, RuntimeError):
    """An env whose call timed out was used again; make a fresh env instead."""


def check_timeout(value: Any, name: str = "step_timeout") -> float | None:
    """Return ``value`` as a positive float (or None), or raise a ValueError that says what to pass."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number of seconds or None, got {value!r}.")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a positive, finite number of seconds (e.g. 30), got {value!r}.")
    return float(value)


def _call_with_limit(fn: Any, args: tuple, kwargs: dict, seconds: float, name: str) -> tuple[bool, Any]:
    """Run ``fn`` in a daemon thread; (True, result) when done in time, (False, None) otherwise.

    An exception raised by ``fn`` is re-raised in the caller.
    """
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["result"]


class StepTimeout(gym.Wrapper):
    """End an episode truncated when one ``step`` takes longer than ``seconds``.

    Args:
        env: the env to guard (usually the result of ``gymnasium.make``).
        seconds: the limit per ``step`` call, positive.
        reset_seconds: the limit per ``reset`` call (None: no limit; resets may load data or
            start a backend process, so they often need longer than a step).
    """

    def __init__(self, env: gym.Env, seconds: float, *, reset_seconds: float | None = None) -> None:
        super().__init__(env)
        limit = check_timeout(seconds, "seconds")
        if limit is None:
            raise ValueError("seconds must be a positive number of seconds; to run without a limit, do not wrap the env.")
        self.seconds: float = limit
        self.reset_seconds = check_timeout(reset_seconds, "reset_seconds")
        self.broken: str | None = None
        """Why the inner env can no longer be used (None while it is healthy)."""
        self._last_info: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self.broken:
            raise EnvNeedsReplacement(f"this env is unusable ({self.broken}); close it and make a new one.")
        if self.reset_seconds is None:
            observation, info = self.env.reset(seed=seed, options=options)
        else:
            done, result = _call_with_limit(self.env.reset, (), {"seed": seed, "options": options},
                                            self.reset_seconds, "env-reset")
            if not done:
                self.broken = f"reset did not return within {self.reset_seconds:g} s"
                raise EnvNeedsReplacement(f"{self.broken}; close this env and make a new one.")
            observation, info = result
        self._last_info = dict(info)
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.broken:
            return self._truncated(f"{self.broken}; reset() needs a new env")
        done, result = _call_with_limit(self.env.step, (action,), {}, self.seconds, "env-step")
        if not done:
            self.broken = f"step did not return within {self.seconds:g} s"
            return self._truncated(f"{self.broken}; the episode was truncated")
        observation, reward, terminated, truncated, info = result
        self._last_info = dict(info)
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        if not self.broken:
            self.env.close()
            return
        # the inner env may be stuck in the abandoned call: never let its cleanup block us
        try:
            _call_with_limit(self.env.close, (), {}, CLOSE_WAIT_S, "env-close")
        except Exception:  # closing a broken env may fail again; nothing left to save
            pass

    def _truncated(self, error: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        info = dict(self._last_info)
        info.update(action_valid=False, error=error)
        observation = f"The environment stopped responding ({error})."
        return observation, 0.0, False, True, info


def needs_replacement(env: gym.Env) -> bool:
    """True when ``env`` (or a wrapper inside it) is a :class:`StepTimeout` that timed out."""
    current: Any = env
    while current is not None:
        if isinstance(current, StepTimeout) and current.broken:
            return True
        current = getattr(current, "env", None) if isinstance(current, gym.Wrapper) else None
    return False


def guard_env(env: gym.Env, step_timeout: float | None) -> gym.Env:
    """Wrap ``env`` in :class:`StepTimeout` when ``step_timeout`` is set; return it unchanged otherwise."""
    seconds = check_timeout(step_timeout)
    return env if seconds is None else StepTimeout(env, seconds)

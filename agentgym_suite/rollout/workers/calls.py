"""What one env does for the rollout engine, the same wherever the env lives.

:func:`reset_env` and :func:`step_env` are run in the engine's process (inline) and inside
worker processes and Ray actors alike, so every executor plays an episode identically. Each
also returns the env's oracle at the new state when asked (the trainer's privileged text),
so a remote env needs no extra round trip for it.

A call's exception is the call's result: :func:`portable_error` turns it into one that can
cross a process boundary and keeps the text :func:`~agentgym_suite.rollout.episodes.describe_error`
would have given where it was raised.
"""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym

from agentgym_suite.core.errors import AgentGymError

ResetResult = tuple[Any, dict[str, Any], "list[str] | None"]
"""``(observation, info, oracle)`` of a reset (oracle None unless asked for)."""
StepResult = tuple[Any, Any, Any, Any, dict[str, Any], "list[str] | None"]
"""``(observation, reward, terminated, truncated, info, oracle)`` of a step."""


class RemoteEnvError(AgentGymError, RuntimeError):
    """An env in a worker raised an exception that cannot be sent back as it is; this carries its text."""


def oracle_of(env: gym.Env) -> list[str] | None:
    """``env.unwrapped.oracle()`` as strings; None when the env has none or it fails."""
    try:
        return [str(a) for a in env.unwrapped.oracle()]  # type: ignore[attr-defined]
    except Exception:  # an env without an oracle gives no privileged text
        return None


def reset_env(env: gym.Env, seed: int | None, options: dict[str, Any] | None, with_oracle: bool) -> ResetResult:
    """``env.reset(seed=, options=)``, plus the oracle of the new state when ``with_oracle``."""
    observation, info = env.reset(seed=seed, options=options)
    return observation, info, oracle_of(env) if with_oracle else None


def step_env(env: gym.Env, action: Any, with_oracle: bool) -> StepResult:
    """``env.step(action)``, plus the oracle of the new state when ``with_oracle`` and the episode goes on."""
    observation, reward, terminated, truncated, info = env.step(action)
    oracle = oracle_of(env) if with_oracle and not (terminated or truncated) else None
    return observation, reward, terminated, truncated, info, oracle


def portable_error(exc: BaseException) -> BaseException:
    """``exc`` ready to cross a process boundary: its described text (type, message, innermost
    frames) attached as ``remote_description``; replaced by a :class:`RemoteEnvError` with that
    text when it cannot be pickled and rebuilt."""
    from agentgym_suite.rollout.episodes import describe_error

    description = describe_error(exc)
    try:
        exc.remote_description = description  # type: ignore[attr-defined]
        copy = pickle.loads(pickle.dumps(exc))
        if type(copy) is type(exc) and getattr(copy, "remote_description", None) == description:
            return exc
    except Exception:  # an exception whose type cannot be rebuilt elsewhere
        pass
    error = RemoteEnvError(description.splitlines()[0] if description else type(exc).__name__)
    error.remote_description = description  # type: ignore[attr-defined]
    return error

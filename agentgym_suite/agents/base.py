"""The ``Agent`` protocol and the two agents every env supports: random and oracle."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything that picks actions for an env of the suite.

    ``reset`` is called at the start of every episode with the env it will act in (agents
    that need privileged access, such as the oracle, read it through ``env.unwrapped``);
    ``act`` returns the raw action text for the latest observation. Model-backed agents also
    offer ``act_batch`` so a rollout can send many envs' prompts to a backend at once.
    """

    name: str

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Prepare for a new episode in ``env``."""
        ...

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Return the next action."""
        ...


class RandomAgent:
    """Picks uniformly among ``info["admissible_actions"]`` (a fixed fallback when there are none).

    Tool envs without admissible actions get a plain reply, which ends or advances the
    conversation the way a do-nothing assistant would.
    """

    name = "random"

    def __init__(self, seed: int | None = None, fallback: str = "look") -> None:
        self._rng = np.random.default_rng(seed)
        self._fallback = fallback
        self._env: gym.Env | None = None

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        self._env = env
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        choices = info.get("admissible_actions") or []
        command = str(choices[int(self._rng.integers(len(choices)))]) if choices else self._fallback
        if self._env is not None:
            return self._env.unwrapped.format_action(command)
        return command


class OracleAgent:
    """Follows ``env.unwrapped.oracle()``: the actions that solve the episode from its current state.

    The oracle is asked again each turn, so it recovers from states other agents left behind.
    """

    name = "oracle"

    def __init__(self) -> None:
        self._env: gym.Env | None = None

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        self._env = env

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._env is None:
            raise RuntimeError("OracleAgent.act() called before reset(env).")
        plan = self._env.unwrapped.oracle()
        if not plan:
            return self._env.unwrapped.format_action("look")
        return plan[0]

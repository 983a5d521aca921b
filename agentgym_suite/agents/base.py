"""The ``Agent`` and ``BatchedAgent`` protocols and the two agents every env supports: random and oracle.

The rollout engine plays either kind (``agentgym_suite.rollout.policies.AgentPolicy``): an
``Agent`` one episode at a time, a ``BatchedAgent`` many episodes in lockstep. The oracle agent
lives beside the engine (``agentgym_suite.rollout.oracle_agent``) because envs that play scripted
episodes themselves (the rehearsal env's grounding) use it too; it is re-exported here.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import gymnasium as gym
import numpy as np

from agentgym_suite.core.errors import BatchActionError  # noqa: F401  (part of the Agent protocol: act_batch raises it)
from agentgym_suite.rollout.oracle_agent import OracleAgent  # noqa: F401  (one of the two agents every env supports)


@runtime_checkable
class Agent(Protocol):
    """Anything that picks actions for an env of the suite.

    ``reset`` is called at the start of every episode with the env it will act in and the
    episode's seed (agents that need privileged access, such as the oracle, read it through
    ``env.unwrapped``); ``act`` returns the raw action text for the latest observation.

    An agent may report more about each action in a ``last_turn`` attribute, read right after
    ``act``: a dict (or object) with any of ``prompt`` (what the model saw: text, or a list of
    chat messages), ``thinking`` (its reasoning) and ``completion_tokens`` (tokens generated).
    Without a ``thinking`` report, the action's ``<think>…</think>`` blocks are recorded.
    """

    name: str

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Prepare for a new episode in ``env``."""
        ...

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Return the next action."""
        ...


@runtime_checkable
class BatchedAgent(Protocol):
    """An agent that serves several envs with one call per turn (model agents: one batched generation).

    ``reset_batch(envs, seed=)`` starts one episode per env; ``act_batch`` returns one action
    per env, in order, and reports each in ``last_turns`` (as ``Agent.last_turn``); when some
    episodes end, ``keep_slots(indices)`` keeps only the envs at ``indices`` (in that order),
    with their histories, before the next ``act_batch``.

    Seeds: an agent whose ``reset_batch`` takes ``seeds`` gets each episode's own seed (one per
    env) from the rollout engine, and should sample each episode from its own seed, so that an
    episode plays the same whatever batch it is in (the model agent does). Otherwise the engine
    passes the seed of the batch's first episode as ``seed``, and with sampling an episode's
    actions depend on which episodes share its batch.

    When some envs of a call get no action, ``act_batch`` raises :class:`BatchActionError`
    carrying the actions it has: only those episodes fail.
    """

    name: str

    def reset_batch(self, envs: Sequence[gym.Env], *, seed: int | None = None) -> None:
        """Start one episode in each of ``envs`` (an agent may also take ``seeds=``, one per env)."""
        ...

    def act_batch(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        """One action per env, from one call."""
        ...

    def keep_slots(self, indices: Sequence[int]) -> None:
        """Keep only the envs at ``indices`` (the others' episodes ended)."""
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

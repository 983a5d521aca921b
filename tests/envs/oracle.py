"""The tests' one oracle follower: an env's own oracle played through the rollout engine with the
suite's :class:`~agentgym_suite.rollout.oracle_agent.OracleAgent`, for the oracle-replay tests of every env.

(``tests/reliability/test_env_lifecycle.py`` steps the oracle from a deep-copied mid-episode state
without a reset, which the engine, resetting every episode it plays, cannot do.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.oracle_agent import OracleAgent


@dataclass
class OracleRun:
    """How one oracle episode ended.

    Attributes:
        info: the info dict of the last step (whole, not the record's scalar subset).
        reward: the last step's reward.
        total: the sum of the rewards.
        steps: the number of steps taken.
        trace: every step's (observation, reward, terminated, truncated, info), in order.
    """

    info: dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0
    total: float = 0.0
    steps: int = 0
    trace: list[tuple[str, float, bool, bool, dict[str, Any]]] = field(default_factory=list)

    def outcomes(self) -> list[tuple[str, float, bool, bool]]:
        """(observation, reward, terminated, won) per step: what two envs playing one task should agree on."""
        return [(obs, reward, terminated, bool(info.get("won"))) for obs, reward, terminated, _, info in self.trace]


class _Watched(gym.Wrapper):
    """Keeps what every ``step`` of the env returned (the engine records only an info subset)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.trace: list[tuple[Any, ...]] = []

    def step(self, action: Any) -> tuple[Any, ...]:
        out = self.env.step(action)
        self.trace.append(out)
        return out


def play_oracle(env: gym.Env, task_id: str, max_steps: int = 200, *, seed: int | None = None,
                plan_at_reset: bool = False, when_done: str | None = None, check: bool = True) -> OracleRun:
    """Play ``task_id`` with the oracle (asked again each step, or ``plan_at_reset``: the plan it made
    at reset, see :class:`~agentgym_suite.rollout.oracle_agent.OracleAgent`) until the episode ends.

    With ``check`` (the default) fails the calling test when the episode broke, an oracle action
    was invalid, or the episode has not terminated within ``max_steps`` steps; without it the run
    is only reported (tests that compare two envs' traces step by step).
    """
    watched = _Watched(env)
    engine = RolloutEngine(OracleAgent(plan_at_reset=plan_at_reset, when_done=when_done), max_turns=max_steps,
                           info_keys=None)
    [played] = engine.run([watched], [EpisodeSpec(task_id, seed, task_id)])
    trace = [(str(obs), float(reward), bool(term), bool(trunc), dict(info)) for obs, reward, term, trunc, info in watched.trace]
    _, reward, terminated, _, info = trace[-1] if trace else ("", 0.0, False, False, {})
    if check:
        assert played.error is None, (task_id, played.error_stage, played.error)
        invalid = [turn.index for turn in played.turns if turn.info.get("action_valid") is False]
        assert not invalid, (task_id, invalid)
        assert terminated, (task_id, played.num_turns)
    return OracleRun(info=info, reward=reward, total=float(played.episode_return), steps=played.num_turns, trace=trace)


def step_through(env: gym.Env, actions: list[str]) -> tuple[float, bool, bool, dict[str, Any]]:
    """Step an already reset ``env`` with ``actions`` until one terminates the episode; (the sum of
    the rewards, terminated, won, the last info). For fixed action lists (gold calls, a perturbation
    of them) that tests replay from a state they set up and inspected themselves."""
    total, terminated, info = 0.0, False, {}
    for action in actions:
        _, reward, terminated, _, info = env.step(action)
        total += float(reward)
        if terminated:
            break
    return total, bool(terminated), bool(info.get("won")), dict(info)

"""The tests' one oracle follower: an env's own oracle played through the rollout engine with the
suite's :class:`~agentgym_suite.agents.base.OracleAgent`, for the oracle-replay tests of every env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine


@dataclass
class OracleRun:
    """How one oracle episode ended.

    Attributes:
        info: the info dict of the last step (whole, not the record's scalar subset).
        reward: the last step's reward.
        total: the sum of the rewards.
        steps: the number of steps taken.
    """

    info: dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0
    total: float = 0.0
    steps: int = 0


class _LastStep(gym.Wrapper):
    """Keeps what the env's last ``step`` returned (the engine records only an info subset)."""

    last: tuple[Any, ...] = ("", 0.0, False, False, {})

    def step(self, action: Any) -> tuple[Any, ...]:
        self.last = self.env.step(action)
        return self.last


def play_oracle(env: gym.Env, task_id: str, max_steps: int = 200, *, seed: int | None = None,
                plan_at_reset: bool = False, when_done: str | None = None) -> OracleRun:
    """Play ``task_id`` with the oracle (asked again each step, or ``plan_at_reset``: the plan it made
    at reset, see :class:`~agentgym_suite.agents.base.OracleAgent`) until the episode ends.

    Fails the calling test when the episode broke, an oracle action was invalid, or the episode
    has not terminated within ``max_steps`` steps.
    """
    watched = _LastStep(env)
    engine = RolloutEngine(OracleAgent(plan_at_reset=plan_at_reset, when_done=when_done), max_turns=max_steps,
                           info_keys=None)
    [played] = engine.run([watched], [EpisodeSpec(task_id, seed, task_id)])
    assert played.error is None, (task_id, played.error_stage, played.error)
    invalid = [turn.index for turn in played.turns if turn.info.get("action_valid") is False]
    assert not invalid, (task_id, invalid)
    _, reward, terminated, _, info = watched.last
    assert terminated, (task_id, played.num_turns)
    return OracleRun(info=dict(info), reward=float(reward), total=float(played.episode_return), steps=played.num_turns)

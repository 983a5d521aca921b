"""Play an env's own oracle through one episode, for the oracle-replay tests of every env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass
class OracleRun:
    """How one oracle episode ended.

    Attributes:
        info: the info dict of the last step.
        reward: the last step's reward.
        total: the sum of the rewards.
        steps: the number of steps taken.
    """

    info: dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0
    total: float = 0.0
    steps: int = 0


def play_oracle(env: gym.Env, task_id: str, max_steps: int = 200) -> OracleRun:
    """Reset to ``task_id`` and take the oracle's next action, asked again each step, until the episode ends.

    Fails the calling test when an oracle action is invalid or the episode has not terminated
    within ``max_steps`` steps.
    """
    env.reset(options={"task_id": task_id})
    run = OracleRun()
    terminated = truncated = False
    while not (terminated or truncated) and run.steps < max_steps:
        _, run.reward, terminated, truncated, run.info = env.step(env.unwrapped.oracle()[0])
        run.total += run.reward
        run.steps += 1
        assert run.info["action_valid"], (task_id, run.steps)
    assert terminated, (task_id, run.steps)
    return run

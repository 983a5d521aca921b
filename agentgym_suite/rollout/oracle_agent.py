"""``OracleAgent``: the suite's one scripted player.

It sits beside the rollout engine, not with the other agents, because code below ``agents``
plays scripted episodes with it: an env may (its floor is lower than ``agents``), and so do
method packages' world-model grounding (EnvACE records a tool env's training split by playing
the oracle: ``methods/envace/grounding.py``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class OracleAgent:
    """Follows ``env.unwrapped.oracle()``: the actions that solve the episode from its current state.

    The suite's one scripted player: ``agentgym eval --agent oracle``, the demo's imitation data and
    fidelity's gold episodes all play it through the rollout engine.

    Args:
        plan_at_reset: follow the plan the oracle gives at reset and ask again only once it runs
            out (a recorded gold sequence). Default: ask every turn, so the agent recovers from
            states other agents left behind.
        when_done: the action when the oracle has no step left (default: the env's ``look``).
    """

    name = "oracle"

    def __init__(self, *, plan_at_reset: bool = False, when_done: str | None = None) -> None:
        self.plan_at_reset = plan_at_reset
        self.when_done = when_done
        self._env: gym.Env | None = None
        self._plan: list[str] = []

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Start an episode in ``env`` (already reset: with ``plan_at_reset`` its plan is read now)."""
        self._env = env
        self._plan = [str(a) for a in env.unwrapped.oracle()] if self.plan_at_reset else []

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next step of the plan made at reset, else the oracle's next step from this state."""
        if self._env is None:
            raise RuntimeError("OracleAgent.act() called before reset(env).")
        if self._plan:
            return self._plan.pop(0)
        plan = self._env.unwrapped.oracle()
        if plan:
            return plan[0]
        return self.when_done if self.when_done is not None else self._env.unwrapped.format_action("look")

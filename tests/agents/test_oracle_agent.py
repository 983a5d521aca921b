"""The suite's one oracle agent: asked every turn, or following the plan it made at reset."""

from __future__ import annotations

from types import SimpleNamespace

from agentgym_suite.agents.base import OracleAgent


class _Plans:
    """An env stand-in whose oracle answers with the next of ``plans`` each time it is asked."""

    def __init__(self, *plans: list[str]) -> None:
        self.plans = list(plans)
        self.unwrapped = SimpleNamespace(oracle=lambda: self.plans.pop(0) if self.plans else [],
                                         format_action=lambda command: f"<{command}>")


def test_asked_every_turn_it_follows_the_current_state():
    agent = OracleAgent()
    agent.reset(_Plans(["a", "b"], ["c"]))
    assert [agent.act("", {}) for _ in range(3)] == ["a", "c", "<look>"]


def test_with_plan_at_reset_it_plays_the_plan_then_asks_again_then_says_when_done():
    agent = OracleAgent(plan_at_reset=True, when_done="Done.")
    agent.reset(_Plans(["a", "b"], ["c"]))
    assert [agent.act("", {}) for _ in range(4)] == ["a", "b", "c", "Done."]

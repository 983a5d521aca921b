"""Tau2-v0 with no user configured says, where a user sees it, that its numbers are not τ² numbers:
a warning on the first reset, ``comparable_to_leaderboard`` false with the reasons in ``info``
and in ``summary.json``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.envs.tau2 import comparability
from agentgym_suite.envs.tau2.users import UserContext

LOGGER = "agentgym_suite.envs.tau2.comparability"


class PoliteUser:
    """A customer that is neither the scripted double nor an LLM (so the user is no departure)."""

    label = "custom:polite"

    def first_message(self, task: dict[str, Any]) -> str:
        return "Hello, I need help with my account."

    def reply(self, context: UserContext) -> str:
        return "###STOP###"


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comparability, "_warned", set())


def test_the_scripted_default_warns_once_and_says_so_in_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    env = gym.make("Tau2-v0", domain="mock")
    _, info = env.reset(seed=0)
    warnings = [r for r in caplog.records if r.name == LOGGER]
    assert len(warnings) == 1
    assert "not comparable to the τ²-bench leaderboard" in warnings[0].getMessage()
    assert "scripted offline test double" in warnings[0].getMessage()
    assert info["comparable_to_leaderboard"] is False
    assert any("scripted" in reason for reason in info["leaderboard_departures"])
    env.reset(seed=1)
    other = gym.make("Tau2-v0", domain="mock")
    other.reset(seed=2)
    assert len([r for r in caplog.records if r.name == LOGGER]) == 1  # once per process and setting
    env.close()
    other.close()


def test_a_configured_user_is_not_called_a_departure(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    env = gym.make("Tau2-v0", domain="mock", user=PoliteUser())
    _, info = env.reset(seed=0)
    assert not any("scripted" in reason for reason in info["leaderboard_departures"])
    assert info["comparable_to_leaderboard"] is (not info["leaderboard_departures"])
    assert not any("scripted" in r.getMessage() for r in caplog.records if r.name == LOGGER)
    env.close()


def test_summary_json_says_not_comparable_with_the_reason(tmp_path: Path) -> None:
    from agentgym_suite.evaluation.runner import evaluate

    result = evaluate("Tau2-v0", "oracle", out_dir=tmp_path, env_kwargs={"domain": "mock"}, episodes=1, k=1,
                      progress=False)
    assert result.summary["comparable_to_leaderboard"] is False
    assert any("scripted" in reason for reason in result.summary["leaderboard_departures"])

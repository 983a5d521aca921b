"""Bad settings are refused up front with a message that says how to fix them.

AgentGRPOConfig has its own table in tests/trainers/test_config.py; this covers the eval
command's arguments, env kwargs, and the engine/backend/guard settings added for faults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.cli import main
from agentgym_suite.llm.openai_backend import OpenAIBackend
from agentgym_suite.rollout.engine import RolloutEngine

from reliability.fakes import HANG_ID


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--env-kwargs", "{not json"], "pass an object such as"),
        (["--env-kwargs", "[1, 2]"], "must be a JSON object"),
        (["--step-timeout", "-1"], "--step-timeout must be a positive number of seconds"),
        (["--step-timeout", "nan"], "--step-timeout must be a positive number of seconds"),
        (["--episodes", "0"], "--episodes must be >= 1"),
        (["--max-turns", "-3"], "--max-turns must be >= 1"),
        (["--agent", "gpt-5"], "Use one of: oracle, random"),
        (["--env-kwargs", '{"hang_task": 1, "no_such_kwarg": 2}'], "no_such_kwarg"),
    ],
)
def test_eval_arguments(extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", HANG_ID, "--out", str(tmp_path / "o"), "--no-progress", *extra]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "env_id, kwargs, message",
    [
        ("TextWorld-v0", {"n_games": 0}, "n_games must be >= 1"),
        ("TextWorld-v0", {"split": "dev"}, "choose one of"),
        ("SyntheticTools-v0", {"action_format": "xml"}, "choose one of"),
        ("SyntheticTools-v0", {"invalid_action": "ignore"}, "choose one of"),
        ("SyntheticTools-v0", {"render_mode": "rgb_array"}, "choose one of"),
    ],
)
def test_env_kwargs(env_id: str, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        gym.make(env_id, **kwargs)


def test_unknown_task_id_suggests_close_matches() -> None:
    env = gym.make("SyntheticTools-v0")
    first = env.unwrapped.task_ids()[0]
    with pytest.raises(KeyError, match="Did you mean"):
        env.reset(options={"task_id": first + "x"})


@pytest.mark.parametrize(
    "kwargs, message",
    [({"max_turns": 0}, "max_turns must be >= 1"), ({"mode": "stream"}, "choose one of"),
     ({"step_timeout": 0}, "positive, finite number of seconds")],
)
def test_rollout_engine_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RolloutEngine(object(), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs, message", [({"max_concurrency": 0}, "max_concurrency must be >= 1"),
                                              ({"max_retries": -1}, "max_retries must be >= 0")])
def test_openai_backend_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OpenAIBackend("m", "http://127.0.0.1:9/v1", **kwargs)

"""``ServedEnv`` (one session's env on the server) on its own: a step timeout frees the env at
once, an env that raises is closed and answered without its text, and the CLI's safe defaults."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.core.spaces import action_space, observation_space
from agentgym_suite.serving.environment import ServedEnv, ServeSpec, SessionError
from agentgym_suite.serving.models import SuiteAction

SLOW_ID = "SlowForServing-v0"
CLOSED: list[str] = []


class SlowEnv(gym.Env):
    """``wait`` sleeps a second, ``boom`` raises an error that names a file, anything else answers at once."""

    def __init__(self) -> None:
        self.observation_space, self.action_space = observation_space(), action_space()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        return "ready", {"task_id": "t", "won": False}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if action == "wait":
            time.sleep(1.0)
        if action == "boom":
            raise OSError("cannot read /srv/private/tasks.json")
        return f"you said {action}", 0.5, False, False, {"task_id": "t", "won": False}

    def close(self) -> None:
        CLOSED.append("closed")


@pytest.fixture(autouse=True)
def slow_env() -> None:
    if SLOW_ID not in gym.registry:
        gym.register(SLOW_ID, entry_point=SlowEnv)
    CLOSED.clear()


def test_a_step_timeout_truncates_and_frees_the_env() -> None:
    env = ServedEnv(ServeSpec(SLOW_ID, step_timeout=0.2))
    env.reset(seed=0)
    observation = env.step(SuiteAction(message="wait"))
    assert observation.truncated and observation.done and "did not return within 0.2 s" in observation.info["error"]
    time.sleep(1.2)  # the abandoned step returns, then its bounded close runs
    assert CLOSED == ["closed"]
    with pytest.raises(SessionError, match="send a reset first"):
        env.step(SuiteAction(message="hi"))
    assert env.reset(seed=1).text == "ready"  # a fresh env
    env.close()


def test_an_env_error_closes_the_env_and_hides_its_text() -> None:
    env = ServedEnv(ServeSpec(SLOW_ID))
    env.reset(seed=0)
    assert env.step(SuiteAction(message="hi")).reward == 0.5
    with pytest.raises(SessionError) as caught:
        env.step(SuiteAction(message="boom"))
    message = str(caught.value)
    assert "OSError" in message and "/srv" not in message and "private" not in message
    assert CLOSED == ["closed"]
    assert env.reset(seed=0).text == "ready"
    env.close()


def test_serve_binds_to_loopback_by_default_and_refuses_unknown_ids(capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import build_parser, main

    args = build_parser().parse_args(["serve", "TextWorld-v0"])
    assert args.host == "127.0.0.1" and args.max_sessions == 64 and not args.show_errors
    assert main(["serve", "NoSuchEnv-v9", "--port", "1"]) == 2
    assert "not a registered env id" in capsys.readouterr().err
    assert main(["serve", "TextWorld-v0", "--env-kwargs", "[1]"]) == 2

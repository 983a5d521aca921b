"""A served id plays exactly what ``gym.make`` of it plays locally: same seeds, same episodes."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.serving.fields import to_jsonable
from serving.conftest import TEXTWORLD_KWARGS, ServerProcess

MAX_STEPS = 40


def play_side_by_side(env_id: str, kwargs: dict[str, Any], server: ServerProcess, seed: int,
                      options: dict[str, Any] | None = None, wrong: str = "this is not a command at all") -> int:
    """Play one seeded episode locally and through the server with the local oracle's actions
    after one wrong action, asserting every observation, reward, flag and info is equal."""
    local = gym.make(env_id, **kwargs)
    remote = gym.make("Remote-v0", url=server.url)
    try:
        obs_l, info_l = local.reset(seed=seed, options=options)
        obs_r, info_r = remote.reset(seed=seed, options=options)
        assert obs_r == obs_l
        assert info_r == to_jsonable(info_l)
        actions = [wrong]
        steps = 0
        done = False
        while not done and steps < MAX_STEPS:
            action = actions.pop(0) if actions else local.unwrapped.oracle()[0]
            step_l = local.step(action)
            step_r = remote.step(action)
            assert step_r[:4] == step_l[:4], f"step {steps}: {action!r}"
            assert step_r[4] == to_jsonable(step_l[4]), f"step {steps}: {action!r}"
            done = step_l[2] or step_l[3]
            steps += 1
        assert done and step_l[4]["won"], "the oracle should have won within the step budget"
        return steps
    finally:
        local.close()
        remote.close()


@pytest.mark.parametrize("seed", [0, 7])
def test_textworld_seeded_episode_is_the_same_through_the_server(textworld_server: ServerProcess, seed: int) -> None:
    assert play_side_by_side("TextWorld-v0", TEXTWORLD_KWARGS, textworld_server, seed) >= 2


def test_tool_env_seeded_episode_is_the_same_through_the_server(tools_server: ServerProcess) -> None:
    wrong = '<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>'
    assert play_side_by_side("SyntheticTools-v0", {}, tools_server, seed=3, wrong=wrong) >= 2


def test_task_id_selects_the_same_task(textworld_server: ServerProcess) -> None:
    remote = gym.make("Remote-v0", url=textworld_server.url)
    try:
        assert remote.unwrapped.task_ids() == ["game-0", "game-1"]
        local = gym.make("TextWorld-v0", **TEXTWORLD_KWARGS).unwrapped
        assert remote.unwrapped.prompt_description == local.prompt_description  # prompts read it
        assert remote.unwrapped.action_format.instructions == local.action_format.instructions
        assert remote.unwrapped.format_action("go east") == local.format_action("go east")
        local.close()
        _, info = remote.reset(seed=1, options={"task_id": "game-1"})
        assert info["task_id"] == "game-1"
    finally:
        remote.close()
    play_side_by_side("TextWorld-v0", TEXTWORLD_KWARGS, textworld_server, seed=1, options={"task_id": "game-1"})

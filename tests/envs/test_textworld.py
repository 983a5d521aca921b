"""TextWorld-v0: contract, determinism, oracle replay on every challenge, bad actions."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.errors import UnknownTaskError

from .oracle import play_oracle

CHALLENGES = ["custom", "tw-coin_collector", "tw-treasure_hunter", "tw-cooking"]


@pytest.fixture(scope="module")
def custom_env() -> gym.Env:
    env = gym.make("TextWorld-v0", n_games=3)
    yield env
    env.close()


def test_check_env_warnings_as_errors(custom_env: gym.Env) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(custom_env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("challenge", CHALLENGES)
def test_oracle_wins_generated_games(challenge: str) -> None:
    env = gym.make("TextWorld-v0", challenge=challenge, n_games=2)
    for task_id in env.unwrapped.task_ids():
        info = play_oracle(env, task_id).info
        assert info["won"] and info["score"] == 1.0, (challenge, task_id)
    env.close()


def test_oracle_replans_after_a_detour(custom_env: gym.Env) -> None:
    custom_env.reset(options={"task_id": "game-1"})
    first = custom_env.unwrapped.oracle()
    custom_env.step("inventory")
    custom_env.step("look")
    assert custom_env.unwrapped.oracle()  # a plan from the new state
    terminated = False
    while not terminated:
        _, _, terminated, truncated, info = custom_env.step(custom_env.unwrapped.oracle()[0])
        assert not truncated
    assert info["won"] and len(first) >= 1


def test_same_seed_same_episode_and_task_ids_differ(custom_env: gym.Env) -> None:
    a, ia = custom_env.reset(seed=7)
    b, ib = custom_env.reset(seed=7)
    assert (a, ia["task_id"]) == (b, ib["task_id"])
    texts = {custom_env.reset(options={"task_id": t})[0] for t in custom_env.unwrapped.task_ids()}
    assert len(texts) == 3


def test_reward_is_score_delta_and_info_keys(custom_env: gym.Env) -> None:
    obs, info = custom_env.reset(options={"task_id": "game-0"})
    assert info["admissible_actions"] and info["task"] and info["turn"] == 0
    max_score = info["max_score"]
    rewards = []
    terminated = False
    while not terminated:
        _, reward, terminated, _, info = custom_env.step(custom_env.unwrapped.oracle()[0])
        rewards.append(reward)
    assert sum(rewards) == max_score and info["won"]


@pytest.mark.parametrize(
    "action",
    ["", "x" * 100_000, "go\x00north", "向东走", "<action><action>go</action></action>", "<action>go east"],
)
def test_bad_actions_explained_never_raise(custom_env: gym.Env, action: str) -> None:
    custom_env.reset(options={"task_id": "game-0"})
    obs, reward, terminated, truncated, info = custom_env.step(action)
    assert info["action_valid"] is False
    assert obs and reward == 0.0 and not terminated


def test_think_action_format_and_verl_tail_forwarding() -> None:
    env = gym.make("TextWorld-v0", n_games=1, action_format="think_action", invalid_action="forward_tail")
    env.reset(options={"task_id": "game-0"})
    plan = env.unwrapped.oracle()
    assert plan[0].startswith("<think>") and "<action>" in plan[0]
    _, _, _, _, info = env.step("no tags at all, just: inventory")
    assert info["action_valid"] is False and info["command"] == "no tags at all, just: inventory"[-30:].strip()
    env.close()


def test_unknown_task_id_message(custom_env: gym.Env) -> None:
    with pytest.raises(UnknownTaskError) as err:
        custom_env.reset(options={"task_id": "game-33"})
    assert str(err.value) == (
        "Unknown task id 'game-33' for TextWorldEnv (3 tasks in this split). Did you mean 'game-2', 'game-1', "
        "'game-0'? See env.unwrapped.task_ids() for the valid ids."
    )


def test_privileged_info_is_opt_in() -> None:
    plain = gym.make("TextWorld-v0", n_games=1)
    _, info = plain.reset(options={"task_id": "game-0"})
    assert "privileged" not in info
    priv = gym.make("TextWorld-v0", n_games=1, privileged=True)
    _, info = priv.reset(options={"task_id": "game-0"})
    assert info["privileged"]["oracle"] == priv.unwrapped.oracle()


def test_truncation_from_turn_budget() -> None:
    env = gym.make("TextWorld-v0", n_games=1, max_episode_steps=3)
    env.reset(options={"task_id": "game-0"})
    flags = [env.step("inventory")[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="Unknown setting"):
        gym.make("TextWorld-v0", settings={"rooms": 3})
    with pytest.raises(ValueError, match="challenge"):
        gym.make("TextWorld-v0", challenge="zork")


def test_unknown_verbs_get_the_game_reply_without_prompt_or_status_line(custom_env: gym.Env) -> None:
    custom_env.reset(options={"task_id": "game-0"})
    obs, _, _, _, info = custom_env.step("xyzzy")
    assert obs == "That's not a verb I recognise." and info["command_admissible"] is False

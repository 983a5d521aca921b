"""ALFWorld-v0 on the real PDDL engine: contract, oracle replay per task type, errors."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.alfworld.env import TASK_TYPES, task_type_of
from agentgym_suite.envs.textworld.meta_commands import REFUSED_COMMANDS

from .oracle import play_oracle

pytest.importorskip("alfworld", reason="ALFWorld backend not installed: pip install 'agentgym-suite[alfworld]'")


@pytest.fixture(scope="module")
def env() -> gym.Env:
    env = gym.make("ALFWorld-v0", split="valid_unseen", reward_scale=10.0)
    yield env
    env.close()


def test_split_sizes(env: gym.Env) -> None:
    assert len(env.unwrapped.task_ids()) == 134
    default = gym.make("ALFWorld-v0").unwrapped
    assert default.split == "valid_seen" and default.evaluation_split() == "valid_seen"
    assert len(default.task_ids()) == 140


def test_a_train_subset_is_reported_as_a_departure() -> None:
    train = gym.make("ALFWorld-v0", split="train").unwrapped
    games = len(train.task_ids())
    departures = train.leaderboard_departures()
    if games < 3553:
        assert departures and f"holds {games} of the release's 3553 games" in departures[0]
    else:
        assert departures == []
    assert gym.make("ALFWorld-v0", split="valid_seen").unwrapped.leaderboard_departures() == []


@pytest.mark.slow  # the default run checks ALFWorld-v0 the same way (tests/test_registration.py, check_env on every id)
def test_check_env_warnings_as_errors(env: gym.Env) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_oracle_wins_one_game_per_task_type(env: gym.Env, task_type: str) -> None:
    task_id = next(t for t in env.unwrapped.task_ids() if task_type_of(t) == task_type)
    run = play_oracle(env, task_id)
    assert run.info["won"] and run.total == 10.0 and run.steps <= 50


def test_observation_task_and_admissible_commands_as_alfworld_shows_them(env: gym.Env) -> None:
    obs, info = env.reset(options={"task_id": env.unwrapped.task_ids()[0]})
    assert obs.startswith("-= Welcome to TextWorld, ALFRED! =-")
    assert "Your task is to:" in obs and info["task"] in obs
    assert "look" in info["admissible_actions"] and "inventory" in info["admissible_actions"]
    assert info["task_type"] in TASK_TYPES


def test_planner_oracle_after_a_detour(env: gym.Env) -> None:
    task_id = next(t for t in env.unwrapped.task_ids() if task_type_of(t) == "pick_and_place_simple")
    _, info = env.reset(options={"task_id": task_id})
    detour = next(a for a in info["admissible_actions"] if a.startswith("go to") and a != env.unwrapped.oracle()[0])
    env.step(detour)
    terminated = False
    while not terminated:
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle()[0])
        assert not truncated
    assert info["won"]


def test_task_type_filter() -> None:
    env = gym.make("ALFWorld-v0", task_types=["pick_two_obj_and_place"])
    ids = env.unwrapped.task_ids()
    assert ids and all(task_type_of(t) == "pick_two_obj_and_place" for t in ids)
    with pytest.raises(ValueError, match="task type"):
        gym.make("ALFWorld-v0", task_types=["juggle"])


@pytest.mark.parametrize("action", ["", "x" * 100_000, "открой холодильник", "go to\x1b[2J desk 1", "<action>"])
def test_bad_actions(env: gym.Env, action: str) -> None:
    env.reset(options={"task_id": env.unwrapped.task_ids()[0]})
    obs, reward, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and obs and reward == 0.0 and not terminated


def test_unknown_command_does_nothing(env: gym.Env) -> None:
    env.reset(options={"task_id": env.unwrapped.task_ids()[0]})
    obs, _, _, _, info = env.step("fly to the moon")
    assert obs == "Nothing happens." and info["command_admissible"] is False


def test_interpreter_commands_do_nothing_on_the_pddl_engine(
    env: gym.Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ALFWorld runs on TextWorld's PDDL engine, which has no interpreter: ``save``, ``script``,
    ``restart`` and the rest are unknown commands there, answered as ALFWorld answers them. They
    write no file and change nothing, and the oracle still wins."""
    monkeypatch.chdir(tmp_path)
    env.reset(options={"task_id": env.unwrapped.task_ids()[0]})
    env.step(env.unwrapped.oracle()[0])
    plan, admissible = env.unwrapped.oracle(), env.unwrapped._admissible
    for command in [*REFUSED_COMMANDS, "look. save", "look then script", "restart", "yes", "quit", "y"]:
        obs, reward, terminated, _, info = env.step(command)
        assert obs == "Nothing happens." and info["command_admissible"] is False, command
        assert reward == 0.0 and not terminated
    assert list(tmp_path.iterdir()) == []
    assert env.unwrapped.oracle() == plan and env.unwrapped._admissible == admissible
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(env.unwrapped.oracle()[0])
    assert info["won"]


def test_unknown_task_and_missing_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: gym.Env) -> None:
    with pytest.raises(UnknownTaskError, match="Unknown task id 'nope'"):
        env.reset(options={"task_id": "nope"})
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="AGENTGYM_DATA.*agentgym data fetch alfworld"):
        gym.make("ALFWorld-v0")


@pytest.mark.slow
def test_oracle_wins_all_valid_unseen(env: gym.Env) -> None:
    lost = [t for t in env.unwrapped.task_ids() if not play_oracle(env, t).info["won"]]
    assert lost == []

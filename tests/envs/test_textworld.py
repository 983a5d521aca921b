"""TextWorld-v0: contract, determinism, oracle replay on every challenge, bad actions."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.errors import UnknownTaskError
from agentgym_suite.envs.textworld.meta_commands import (
    HARMLESS_COMMANDS,
    REFUSED_COMMANDS,
    dictionary_form,
    meta_command_problem,
)

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
    run = play_oracle(custom_env, "game-0")
    assert run.total == info["max_score"] and run.info["won"]


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
    # (the tail must not start with "o ": the game would read that as OOPS, which the env refuses)
    _, _, _, _, info = env.step("I forgot the tags; my command is inventory")
    assert info["action_valid"] is False and info["command"] == "I forgot the tags; my command is inventory"[-30:].strip()
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


# ---------------------------------------------------------------------------- interpreter commands
CHAINED_AND_SPELLED = ["SAVE", "save mygame", "look. save", "look then script", "inventory, transcripts",
                       "superbriefly", "x coin. restart", "tw-extra-infos score", "tw-print max_score",
                       "take coni", "o coin", "look", "g", "again"]
"""Out-of-world commands behind a full stop, ``then``, a comma, capitals or a longer spelling the
game's dictionary cuts to the same word (and ``o``/``g`` after a real command, which redo it)."""


def test_interpreter_commands_are_refused_and_write_no_file(
    custom_env: gym.Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``save`` wrote a .qzl file and ``script`` a transcript into the working directory;
    ``restart`` + ``yes`` restarted the game while the env's history went on, so the oracle failed;
    ``print_state`` showed the hidden world; ``restart``/``quit`` left a yes/no prompt."""
    monkeypatch.chdir(tmp_path)
    custom_env.reset(options={"task_id": "game-1"})
    custom_env.step(custom_env.unwrapped.oracle()[0])
    plan = custom_env.unwrapped.oracle()
    for command in [*REFUSED_COMMANDS, *CHAINED_AND_SPELLED]:
        observation, reward, terminated, truncated, info = custom_env.step(command)
        if command in ("take coni", "look"):  # ordinary moves between the refused ones
            assert info["action_valid"], observation
            continue
        assert info["action_valid"] is False and "interpreter command" in observation, (command, observation)
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert "Are you sure" not in observation and "STATE START" not in observation
    answered, *_ = custom_env.step("yes")  # nothing left to confirm
    assert "rhetorical" in answered
    assert list(tmp_path.iterdir()) == [], "an agent's command wrote a file"
    assert custom_env.unwrapped.oracle() == plan
    terminated = False
    while not terminated:
        _, _, terminated, truncated, info = custom_env.step(custom_env.unwrapped.oracle()[0])
        assert not truncated and info["action_valid"]
    assert info["won"] and info["score"] == 1.0


@pytest.mark.parametrize("command", HARMLESS_COMMANDS)
def test_harmless_questions_still_reach_the_game(custom_env: gym.Env, command: str) -> None:
    custom_env.reset(options={"task_id": "game-0"})
    observation, _, terminated, _, info = custom_env.step(command)
    assert info["action_valid"] and observation and not terminated
    assert "interpreter command" not in observation


@pytest.mark.parametrize("challenge", CHALLENGES)
def test_no_admissible_command_or_oracle_step_is_refused(challenge: str) -> None:
    env = gym.make("TextWorld-v0", challenge=challenge, n_games=1)
    _, info = env.reset(options={"task_id": "game-0"})
    terminated = False
    while not terminated:
        refused = [c for c in info["admissible_actions"] if meta_command_problem(c)]
        assert not refused, refused
        action = env.unwrapped.oracle()[0]
        assert not meta_command_problem(action)
        _, _, terminated, _, info = env.step(action)
    assert info["won"]
    env.close()


def test_refused_words_match_the_games_own_dictionary(custom_env: gym.Env) -> None:
    """Each out-of-world verb in a generated game's dictionary (jericho's list of commands that act
    on the game from outside, and TextWorld's own commands) is refused or a documented question;
    words are compared in the dictionary's nine-Z-character form, as the game compares them."""
    jericho = pytest.importorskip("jericho")
    from jericho.defines import ILLEGAL_ACTIONS

    custom_env.reset(options={"task_id": "game-0"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        story = jericho.FrotzEnv(custom_env.unwrapped.game_file("game-0"))
    try:
        verbs = {str(w) for w in story.get_dictionary() if w.is_verb}
    finally:
        story.close()
    illegal = {dictionary_form(w) for w in ILLEGAL_ACTIONS}
    out_of_world = {v for v in verbs if dictionary_form(v) in illegal or v.startswith("tw-")
                    or v in ("print_st", "enable", "disable", "restrict")}
    assert {"save", "restore", "restart", "quit", "script", "transcrip", "superbrie", "print_st"} <= out_of_world
    harmless = {dictionary_form(c) for c in HARMLESS_COMMANDS}
    for verb in out_of_world:
        phrase = {"enable": "enable print state option", "disable": "disable print state option",
                  "restrict": "restrict commands"}.get(verb, verb)
        assert meta_command_problem(phrase) or dictionary_form(verb) in harmless, verb
    assert dictionary_form("transcript") == dictionary_form("transcrip") != dictionary_form("transcrib")
    assert dictionary_form("print_state") == dictionary_form("print_st")


# ---------------------------------------------------------------------------- where games are written
def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_games_are_generated_into_the_cache_and_read_from_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test run once wrote 12 MB of generated games into ``$AGENTGYM_DATA/textworld/games``;
    benchmark data folders are often shared and read-only. New games go to the cache folder;
    games a data folder already holds are played from there, and nothing is written into it."""
    from agentgym_suite.envs.textworld.games import data_games_root, games_root

    data, cache = tmp_path / "data", tmp_path / "cache"
    (data / "textworld").mkdir(parents=True)
    monkeypatch.setenv("AGENTGYM_DATA", str(data))
    monkeypatch.setenv("AGENTGYM_CACHE", str(cache))
    kwargs = {"challenge": "tw-coin_collector", "n_games": 1, "seed": 535353}
    env = gym.make("TextWorld-v0", **kwargs)
    env.reset(options={"task_id": "game-0"})
    assert Path(env.unwrapped.game_file("game-0")).is_relative_to(cache / "textworld" / "games")
    env.close()
    assert _tree(data) == ["textworld"], "nothing may be written into the data folder"

    shutil.copytree(games_root(), data_games_root(), dirs_exist_ok=True)  # a data folder that ships the game
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "fresh-cache"))
    env = gym.make("TextWorld-v0", **kwargs)
    env.reset(options={"task_id": "game-0"})
    shipped = Path(env.unwrapped.game_file("game-0"))
    assert shipped.is_relative_to(data_games_root())
    env.close()
    shipped.write_bytes(shipped.read_bytes()[:100])  # damaged: generated anew, into the cache
    listing = _tree(data)
    env = gym.make("TextWorld-v0", **kwargs)
    env.reset(options={"task_id": "game-0"})
    assert Path(env.unwrapped.game_file("game-0")).is_relative_to(tmp_path / "fresh-cache")
    env.close()
    assert _tree(data) == listing and shipped.stat().st_size == 100

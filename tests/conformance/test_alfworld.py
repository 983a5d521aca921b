"""ALFWorld-v0 against the alfworld package's own env: on gold walkthroughs and perturbed plays, every
step's ``won`` and ``done`` (and so verl-agent's reward, 10 x won) equal those of the env stack
``AlfredTWEnv.init_env`` builds (TextWorld's gym env over the game with ``AlfredDemangler`` and
``AlfredInfos``). alfworld is our dependency, so it is called directly; nothing is recorded."""

from __future__ import annotations

import re

import pytest

from agentgym_suite.core.data import has_benchmark_data

pytest.importorskip("alfworld", reason="ALFWorld backend not installed: pip install 'agentgym-suite[alfworld]'")
pytestmark = pytest.mark.skipif(not has_benchmark_data("alfworld", "json_2.1.1/valid_seen"), reason="ALFWorld data not present")

GAMES_PER_TYPE = 1


def _upstream(game_file: str):  # noqa: ANN202 - a textworld gym env
    import textworld
    import textworld.gym
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    env_id = textworld.gym.register_games([game_file], infos, batch_size=1, asynchronous=False, max_episode_steps=50,
                                          wrappers=[AlfredDemangler(shuffle=False), AlfredInfos])
    return textworld.gym.make(env_id)


def _other_id(command: str) -> str:
    """The command with its first object number changed (``apple 1`` -> ``apple 2``)."""
    return re.sub(r"(\w) (\d+)", lambda m: f"{m.group(1)} {int(m.group(2)) % 9 + 1}", command, count=1)


def _plays(walkthrough: list[str]) -> dict[str, list[str]]:
    middle = len(walkthrough) // 2
    return {
        "gold": walkthrough,
        "a step dropped": walkthrough[:middle] + walkthrough[middle + 1:],
        "a wrong id": walkthrough[:middle] + [_other_id(walkthrough[middle])] + walkthrough[middle + 1:],
        "an extra action": walkthrough[:middle] + ["inventory", "look"] + walkthrough[middle:],
        "an unknown command": walkthrough[:middle] + ["fly to the moon"] + walkthrough[middle:],
        "after the goal": walkthrough + ["look"],
    }


def _compare(task_types: tuple[str, ...], play_names: tuple[str, ...]) -> int:
    from agentgym_suite.envs.alfworld.env import ALFWorldEnv, task_type_of

    ours = ALFWorldEnv(split="valid_seen", reward_scale=10.0)
    chosen = [next(t for t in ours.task_ids() if task_type_of(t) == kind) for kind in task_types]
    compared = 0
    for task_id in chosen:
        upstream = _upstream(str(ours.game_file(task_id)))
        ours.reset(options={"task_id": task_id})
        walkthrough = list(ours._walkthrough)
        assert walkthrough, task_id
        plays = _plays(walkthrough)
        for name in play_names:
            ours.reset(options={"task_id": task_id})
            upstream.reset()
            info: dict = {}
            for command in plays[name]:
                _, _, their_done, their_infos = upstream.step([command])
                _, reward, terminated, _, info = ours.step(command)
                their_won = bool(their_infos["won"][0])
                assert info["won"] == their_won, (task_id, name, command)
                assert reward == (10.0 if their_won else 0.0), (task_id, name, command)
                compared += 1
                if their_done[0] or terminated:
                    assert bool(their_done[0]) == terminated, (task_id, name, command)
                    break
            if name == "gold":
                assert info["won"], (task_id, "the walkthrough should win")
        upstream.close()
    ours.close()
    return compared


def test_won_and_done_equal_alfworlds_own_env_on_one_game() -> None:
    """One game (about a minute: each upstream reset parses the game's grammar again)."""
    assert _compare(("pick_heat_then_place_in_recep",), ("gold", "a wrong id")) >= 4


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_won_and_done_equal_alfworlds_own_env_on_every_task_type() -> None:
    from agentgym_suite.envs.alfworld.env import TASK_TYPES

    assert _compare(TASK_TYPES, tuple(_plays(["a", "b"]))) > 6 * 6

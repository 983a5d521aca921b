"""ScienceWorld-v0 against the scienceworld package's own scoring: on gold paths and perturbed plays of
test variations, every step's score (0-100) and completion equal those of ``scienceworld.ScienceWorldEnv``
played alongside. scienceworld is our dependency, so it is called directly; nothing is recorded."""

from __future__ import annotations

import pytest

pytest.importorskip("scienceworld", reason="ScienceWorld backend not installed: pip install 'agentgym-suite[scienceworld]'")

TASKS = ("find-living-thing", "lifespan-longest-lived")


def _plays(gold: list[str]) -> dict[str, list[str]]:
    middle = len(gold) // 2
    return {
        "gold": gold,
        "a step dropped": gold[:middle] + gold[middle + 1:],
        "an extra action": gold[:middle] + ["look around", "inventory"] + gold[middle:],
        "an unknown command": gold[:middle] + ["fly to the moon"] + gold[middle:],
        "a wrong focus": gold[:1] + ["focus on door to kitchen"] + gold[1:],
    }


def _compare(tasks: tuple[str, ...], play_names: tuple[str, ...]) -> int:
    from scienceworld import ScienceWorldEnv as Upstream

    from agentgym_suite.envs.scienceworld import ScienceWorldEnv

    ours = ScienceWorldEnv(task=list(tasks), split="test", max_admissible=None)
    upstream = Upstream("", envStepLimit=100)
    compared = 0
    try:
        for name in tasks:
            task_id = next(t for t in ours.task_ids() if t.startswith(f"{name}/"))
            number = int(task_id.split("/")[1])
            upstream.load(name, number, "", generateGoldPath=True)
            plays = _plays([str(a) for a in upstream.get_gold_action_sequence()])
            for play_name in play_names:
                upstream.load(name, number, "", generateGoldPath=False)
                upstream.reset()
                ours.reset(options={"task_id": task_id})
                info: dict = {}
                for command in plays[play_name]:
                    _, _, their_done, their_info = upstream.step(command)
                    _, _, terminated, _, info = ours.step(command)
                    assert info["scienceworld_score"] == their_info["score"], (task_id, play_name, command)
                    compared += 1
                    if their_done or terminated:
                        assert bool(their_done) == terminated, (task_id, play_name, command)
                        break
                if play_name == "gold":
                    assert info["won"] and info["scienceworld_score"] == 100
    finally:
        ours.close()
        upstream.close()
    return compared


def test_scores_equal_the_simulators_own_on_one_task() -> None:
    assert _compare(("find-living-thing",), ("gold", "a wrong focus")) > 5


@pytest.mark.slow
def test_scores_equal_the_simulators_own_on_every_play() -> None:
    assert _compare(TASKS, tuple(_plays(["a", "b"]))) > 20

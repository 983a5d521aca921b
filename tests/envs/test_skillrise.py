"""SkillRise trials: roles, positions, skill-document parsing, and task families."""

from __future__ import annotations

from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.envs.skillrise import SkillRiseTrial, parse_skill
from trainers.fake_env import TASKS, make_letter_env


def test_parse_skill_takes_last_block_and_caps_length():
    assert parse_skill("<skill>a</skill> then <skill> b </skill>", 100) == "b"
    assert parse_skill("<skill>" + "x" * 50 + "</skill>", 10) == "x" * 10
    assert parse_skill("no tags here", 100) is None
    assert parse_skill("<skill>   </skill>", 100) == ""  # an empty block empties the document, as released
    assert parse_skill("</skill> reversed <skill>", 100) is None


def test_trial_alternates_solve_and_curate():
    env = SkillRiseTrial(make_letter_env(horizon=1), k=3, turns_per_task=1)
    _, info = env.reset(seed=0, options={"task_id": "t1"})
    assert (info["role"], info["position"]) == ("solve", 0) and info["trial_tasks"][0] == "t1"
    assert len(set(info["trial_tasks"])) == 3
    _, r, term, _, info = env.step("say e")
    assert (info["role"], info["position"], r, term) == ("curate", 0, 1.0, False)
    assert info["position_rewards"] == {0: 1.0}
    _, _, _, _, info = env.step("<skill>## Workflow\nsay the letter</skill>")
    assert (info["role"], info["position"], info["action_valid"]) == ("solve", 1, True)
    assert env.doc == "## Workflow\nsay the letter"
    assert "say the letter" in info["prompt_messages"][0]["content"]
    env.step("nothing")
    _, _, _, _, info = env.step("I forgot the tags")
    assert info["action_valid"] is False and env.doc == "## Workflow\nsay the letter"
    _, _, term, _, info = env.step("say")
    assert term and set(info["position_rewards"]) == {0, 1, 2}
    assert not undocumented_keys(info, env), "the trial and its base env declare every key a trial reports"


def test_trial_tasks_come_from_the_first_task_family():
    vowels = {t for t, text in TASKS.items() if text[-1] in "aeiou"}

    def family(task_id: str) -> str:
        return "vowel" if task_id in vowels else "consonant"

    env = SkillRiseTrial(make_letter_env(horizon=1), family_of=family, k=3)
    for seed in range(5):
        _, info = env.reset(seed=seed, options={"task_id": "t1"})
        assert set(info["trial_tasks"]) <= vowels and len(set(info["trial_tasks"])) == 3
    _, info = env.reset(seed=0, options={"task_id": "t5"})  # 's' and 't' are the only consonants
    assert info["trial_tasks"][0] == "t5" and set(info["trial_tasks"]) == {"t5", "t6"}


def test_trial_tasks_share_the_family_the_env_reports():
    from trainers.fake_env import LetterEnv

    class VowelEnv(LetterEnv):
        def task_family(self, task_id: str) -> str:
            return "vowel" if TASKS[task_id][-1] in "aeiou" else "consonant"

    env = SkillRiseTrial(VowelEnv(horizon=1), k=3, turns_per_task=1)
    for first, family in (("t5", "consonant"), ("t0", "vowel")):
        _, info = env.reset(seed=1, options={"task_id": first})
        assert info["task_family"] == family
        assert {env.env.task_family(t) for t in info["trial_tasks"]} == {family}


class _GradedLetterEnv:
    """A letter env whose oracle for task ``tN`` is N+1 actions long (N = the task's index)."""

    @staticmethod
    def make():
        from trainers.fake_env import LetterEnv

        class Graded(LetterEnv):
            def oracle(self) -> list[str]:
                return [f"say {self._letter}"] * (int(str(self.task_id)[1:]) + 1)

        return Graded(horizon=1)


def test_trial_tasks_go_from_easier_to_harder():
    """The paper orders a trial's tasks easier to harder; here by the length of the env's oracle."""
    env = SkillRiseTrial(_GradedLetterEnv.make(), k=3, turns_per_task=1)
    for seed in range(6):
        _, info = env.reset(seed=seed, options={"task_id": "t5"})
        tasks = info["trial_tasks"]
        assert "t5" in tasks and tasks == sorted(tasks, key=lambda t: int(t[1:])), tasks
        assert info["position"] == 0 and info["task_id"] == tasks[0]
    drawn = SkillRiseTrial(_GradedLetterEnv.make(), k=3, turns_per_task=1, order="drawn")
    _, info = drawn.reset(seed=0, options={"task_id": "t5"})
    assert info["trial_tasks"][0] == "t5"  # drawn order: the group's task first
    custom = SkillRiseTrial(_GradedLetterEnv.make(), k=3, turns_per_task=1, difficulty=lambda t: -int(t[1:]))
    _, info = custom.reset(seed=0, options={"task_id": "t0"})
    assert info["trial_tasks"][-1] == "t0"


def test_repeat_mode_plays_one_task_k_times_and_reports_each_finish():
    env = SkillRiseTrial(make_letter_env(horizon=1), k=3, turns_per_task=1, mode="repeat")
    _, info = env.reset(seed=0, options={"task_id": "t2"})
    assert info["trial_tasks"] == ["t2", "t2", "t2"]
    finished = []
    for action in ["wrong", "<skill>say the letter</skill>", "say i", "<skill>x</skill>", "say i"]:
        if info["role"] == "curate":
            assert env.oracle()[0].startswith("<skill>")  # the curate oracle keeps the document
        _, _, terminated, _, info = env.step(action)
        if "finished_position" in info:
            finished.append((info["finished_position"], info["finished_task_id"], info["finished_won"]))
        if terminated:
            break
    assert finished == [(0, "t2", False), (1, "t2", True), (2, "t2", True)]
    assert not undocumented_keys(info, env)


def test_alfworld_trials_are_ordered_by_expert_plan_length():
    import importlib.util

    import pytest

    from agentgym_suite.core.data import has_benchmark_data

    if importlib.util.find_spec("alfworld") is None or not has_benchmark_data("alfworld", "json_2.1.1/valid_unseen"):
        pytest.skip("ALFWorld backend or data not available")
    from agentgym_suite.envs.alfworld.env import ALFWorldEnv

    base = ALFWorldEnv(split="valid_unseen", task_types=["pick_heat_then_place_in_recep"])
    env = SkillRiseTrial(base, k=3, turns_per_task=1)
    try:
        _, info = env.reset(seed=3, options={"task_id": base.task_ids()[0]})
        lengths = [env.oracle_length(t) for t in info["trial_tasks"]]
        assert lengths == sorted(lengths) and all(n > 0 for n in lengths), lengths
        assert {base.task_family(t) for t in info["trial_tasks"]} == {"heat"}
    finally:
        env.close()


def test_build_groups_follows_the_released_files_rule():
    from agentgym_suite.envs.skillrise.groups import build_groups

    types = {f"a{i}": "a" for i in range(7)} | {f"b{i}": "b" for i in range(3)}
    length = {t: (int(t[1:]) * 7) % 5 for t in types}
    groups = build_groups(types, length.__getitem__, k=3, seed=4)
    assert [g.group_id for g in groups] == ["a_K3_0", "a_K3_1", "a_K3_2", "b_K3_0"]
    for g in groups:
        assert len(g.task_ids) == 3 and {types[t] for t in g.task_ids} == {g.task_type}
        assert list(g.plan_lengths) == sorted(g.plan_lengths) == [length[t] for t in g.task_ids]
    real = [t for g in groups for t, padded in zip(g.task_ids, g.padded) if not padded]
    assert sorted(real) == sorted(types)  # every task once; the 7th 'a' task's group is filled up
    assert sum(p for g in groups for p in g.padded) == 2
    assert build_groups(types, length.__getitem__, k=3, seed=4) == groups
    assert build_groups(types, length.__getitem__, k=3, seed=5) != groups


def test_the_shipped_alfworld_groups_are_our_splits_rebuilt(tmp_path):
    import json

    import pytest

    from agentgym_suite.core.data import has_benchmark_data
    from agentgym_suite.envs.alfworld.env import ALFWorldEnv, task_type_of
    from agentgym_suite.envs.skillrise import build_groups
    from agentgym_suite.envs.skillrise.groups import group_file, load_groups

    if not has_benchmark_data("alfworld", "json_2.1.1/train"):
        pytest.skip("ALFWorld data not available")
    out = build_groups.main(["--out", str(tmp_path / "groups.json")])
    assert json.loads(out.read_text()) == json.loads(group_file("alfworld_train_k3").read_text())
    env = ALFWorldEnv(split="train")
    groups = load_groups("alfworld_train_k3")
    assert {t for g in groups for t in g.task_ids} == set(env.task_ids())
    for g in groups:
        assert {task_type_of(t) for t in g.task_ids} == {g.task_type} and list(g.plan_lengths) == sorted(g.plan_lengths)
        assert list(g.plan_lengths) == [build_groups.walkthrough_length(env, t) for t in g.task_ids]


def test_a_trial_over_curated_groups_plays_each_group_in_its_order():
    import pytest

    from agentgym_suite.envs.skillrise.groups import TaskGroup, serving_order

    groups = [TaskGroup(f"g{i}", "letters", (f"t{i}", f"t{i + 1}", f"t{i + 2}"), (1, 2, 3), (False,) * 3)
              for i in range(4)]
    env = SkillRiseTrial(make_letter_env(horizon=1), k=3, turns_per_task=1, groups=groups, group_seed=3)
    assert env.task_ids() == [g.group_id for g in serving_order(groups, 3)] != ["g0", "g1", "g2", "g3"]
    _, info = env.reset(seed=0, options={"task_id": "g2"})
    assert info["trial_tasks"] == ["t2", "t3", "t4"] and info["task_id"] == "t2"
    with pytest.raises(ValueError, match="curated groups"):
        env.reset(seed=0, options={"task_id": "t1"})
    stray = SkillRiseTrial(make_letter_env(horizon=1), k=3, groups=[TaskGroup("x", "", ("t0", "zz", "t1"), (0,) * 3,
                                                                              (False,) * 3)])
    with pytest.raises(ValueError, match="does not have"):
        stray.reset(seed=0, options={"task_id": "x"})
    with pytest.raises(ValueError, match="k=2"):
        SkillRiseTrial(make_letter_env(horizon=1), k=2, groups=groups)


def test_action_tag_projection_reads_tags_only_and_sends_the_command():
    import pytest

    from trainers.fake_env import LetterEnv

    env = SkillRiseTrial(make_letter_env(horizon=2), k=2, turns_per_task=2, projection="action_tag")
    _, info = env.reset(seed=0, options={"task_id": "t1"})  # the letter e
    assert "<action> </action>" in info["prompt_messages"][0]["content"] and info["prompt_truncation"] == "error"
    _, reward, _, _, info = env.step("I will SAY E now")  # no tags: invalid, its last 30 characters are sent
    assert (info["action_valid"], info["projected_action"], reward) == (False, "i will say e now", 1.0)
    _, _, _, _, info = env.step("thinking...<ACTION>Say E</ACTION>")  # tags in any case; no <think> needed
    assert info["action_valid"] and info["role"] == "curate"
    assert "Action 1: i will say e now\nObservation 1:" in info["prompt_messages"][0]["content"]
    with pytest.raises(ValueError, match="action_tag"):
        SkillRiseTrial(LetterEnv(action_format="think_action"), projection="action_tag")
    tagged = SkillRiseTrial(LetterEnv(horizon=2, action_format="action_tag", invalid_action="forward_tail"), k=2,
                            turns_per_task=2, projection="action_tag")
    tagged.reset(seed=0, options={"task_id": "t1"})
    _, reward, _, _, info = tagged.step("I will SAY E now")  # the env forwards the same tail
    assert (info["action_valid"], info["projected_action"], reward) == (False, "i will say e now", 1.0)
    _, _, _, _, info = tagged.step("<ACTION>Say E</ACTION>")
    assert info["action_valid"] and info["role"] == "curate"


def test_the_action_tag_format_reads_what_the_trial_reads():
    from agentgym_suite.core.actions import get_action_format
    from agentgym_suite.envs.skillrise.projection import project_solve_action

    fmt = get_action_format("action_tag")
    for text in ("why <ACTION>Go To Desk 1</ACTION>", "<action>look</action><action>x</action>", "no tags at all",
                 "</action> then <action>open drawer 2</action>", "<think>a</think><action>inventory</action>"):
        parsed, projected = fmt.parse(text), project_solve_action(text)
        assert parsed.valid == projected.valid
        if projected.valid and projected.command:
            assert parsed.command == projected.command
        elif not projected.valid:
            assert parsed.command is None and parsed.fallback_command() == projected.command.strip()

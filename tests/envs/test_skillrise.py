"""SkillRise trials: roles, positions, skill-document parsing, and task families."""

from __future__ import annotations

from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.envs.skillrise import SkillRiseTrial, parse_skill
from trainers.fake_env import TASKS, make_letter_env


def test_parse_skill_takes_last_block_and_caps_length():
    assert parse_skill("<skill>a</skill> then <skill> b </skill>", 100) == "b"
    assert parse_skill("<skill>" + "x" * 50 + "</skill>", 10) == "x" * 10
    assert parse_skill("no tags here", 100) is None
    assert parse_skill("<skill>   </skill>", 100) is None


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
    assert not undocumented_keys(info), "core/info.py documents every key a trial reports"


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

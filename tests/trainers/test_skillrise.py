"""SkillRise trials: roles, positions, skill-document parsing, and a training run."""

from __future__ import annotations

import math

import pytest

from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.skillrise import SkillRiseTrial, parse_skill
from trainers.conftest import changed, snapshot
from trainers.fake_env import make_letter_env


def test_parse_skill_takes_last_block_and_caps_length():
    assert parse_skill("<skill>a</skill> then <skill> b </skill>", 100) == "b"
    assert parse_skill("<skill>" + "x" * 50 + "</skill>", 10) == "x" * 10
    assert parse_skill("no tags here", 100) is None
    assert parse_skill("<skill>   </skill>", 100) is None


def test_trial_alternates_solve_and_curate():
    env = SkillRiseTrial(make_letter_env(horizon=1), env_id="Letters-v0", k=3, turns_per_task=1)
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


@pytest.mark.slow
def test_skillrise_training_run(make_config):
    trainer = AgentGRPOTrainer(args=make_config(credit="skillrise", skillrise_tasks=2, skillrise_turns_per_task=1,
                                                max_turns=3), env_factory=lambda: make_letter_env(horizon=1))
    before = snapshot(trainer.model)
    trainer.train()
    assert changed(before, trainer.model)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)

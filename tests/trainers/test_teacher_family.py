"""The trainer's skill teacher reads the family the env reports at reset, not the env id."""

from __future__ import annotations

import agentgym_suite.trainers.agent_grpo as agent_grpo
from agentgym_suite.trainers import AgentGRPOTrainer
from trainers.fake_env import LetterEnv


class HeatLetterEnv(LetterEnv):
    """The letter env with every task in the ``heat`` family (an ALFWorld skill text)."""

    def task_family(self, task_id: str) -> str:
        return "heat"


def test_skills_teacher_gets_the_family_from_the_reset_info(make_config, monkeypatch):
    asked: list[str] = []
    real_skill_text = agent_grpo.skill_text

    def recording_skill_text(family, skills_dir=None):
        asked.append(family)
        return real_skill_text(family, skills_dir)

    monkeypatch.setattr(agent_grpo, "skill_text", recording_skill_text)
    trainer = AgentGRPOTrainer(args=make_config(credit="sdar", teacher_context="skills", max_steps=1),
                               env_factory=lambda **kwargs: HeatLetterEnv(**kwargs))
    trainer.train()
    assert asked and set(asked) == {"heat"}
    assert "heat" in real_skill_text("heat").lower()  # the family named a real skill text

"""The trainer's skill teacher asks the env's hooks (``skill_texts``, ``skill_for_task``) with the
family the env reports at reset, and the run names where its texts come from."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from agentgym_suite.core.skills import SkillBook
from agentgym_suite.envs.alfworld.env import ALFWorldEnv
from agentgym_suite.trainers import AgentGRPOTrainer
from trainers.fake_env import LetterEnv


class HeatLetterEnv(LetterEnv):
    """The letter env with every task in the ``heat`` family, reading ALFWorld's fallback texts."""

    skills_fallback: ClassVar[Path | None] = ALFWorldEnv.skills_fallback
    asked: ClassVar[list[tuple[str, str]]] = []

    def task_family(self, task_id: str) -> str:
        return "heat"

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        cls.asked.append((family, prompt_text))
        return super().skill_for_task(book, task_id, family, prompt_text)


def test_skills_teacher_asks_the_env_hook_with_the_reset_family(make_config, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path / "no-data"))
    HeatLetterEnv.asked.clear()
    with pytest.warns(UserWarning, match="fallback skill texts"):
        trainer = AgentGRPOTrainer(args=make_config(credit="sdar", teacher_context="skills", max_steps=1),
                                   env_factory=lambda **kwargs: HeatLetterEnv(**kwargs))
    assert trainer.args.skills_origin.startswith("fallback") and "alfworld" in trainer.args.skills_origin
    trainer.train()
    assert HeatLetterEnv.asked and {family for family, _ in HeatLetterEnv.asked} == {"heat"}
    assert all(prompt for _, prompt in HeatLetterEnv.asked)  # the decoded student prompt, for keyword rules
    texts = trainer.teacher_context.skill_texts  # the plug-in's teacher context resolved the env's texts once
    text = texts.text("t", "heat", "")
    assert "heat" in text.lower() and text.startswith(texts.book.texts["general_skills"])

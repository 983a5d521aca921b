"""The generic layers follow what an env or a plug-in declares, never its name: a throwaway env
registered at run time under an unknown id gets the same treatment as the suite's own."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import pytest

from agentgym_suite.commands.eval import apply_user_and_judge
from agentgym_suite.core.info import declared_label_keys
from agentgym_suite.core.policy_loan import POLICY
from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.registration import all_entries, training_env_modes
from agentgym_suite.trainers.config import ENV_MODES
from agentgym_suite.trainers.run_context import _refuse_workers_for_a_borrowing_env

USER_ID = "HookUser-v0"
BORROW_ID = "HookBorrow-v0"


class WithUser(TextEnv):
    """Declares a simulated user (under its own argument name), a judge, a label key and a model-following setting."""

    user_setting: ClassVar[str] = "customer"
    judge_setting: ClassVar[str] = "grader"
    label_keys: ClassVar[tuple[str, ...]] = ("grader",)

    def __init__(self, customer: Any = None, grader: Any = None, notes: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)

    @classmethod
    def with_agent_model(cls, kwargs: dict[str, Any], model: str | None) -> dict[str, Any]:
        filled = super().with_agent_model(kwargs, model)
        if filled.get("notes") == "same":
            filled["notes"] = f"written by {model}"
        return filled


class Borrows(TextEnv):
    """Borrows the trained policy through ``helper``."""

    policy_setting: ClassVar[str] = "helper"

    def __init__(self, helper: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)


def setup_module() -> None:
    for env_id, cls in ((USER_ID, WithUser), (BORROW_ID, Borrows)):
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=cls, max_episode_steps=3)


def test_user_and_judge_follow_the_declared_settings() -> None:
    setup_module()
    assert apply_user_and_judge(USER_ID, {}, "hf:some/model", None, None)["customer"] == "llm:hf:some/model"
    assert apply_user_and_judge(USER_ID, {}, "oracle", None, "hf:judge") == {"customer": "scripted", "grader": "hf:judge"}
    assert apply_user_and_judge(USER_ID, {"notes": "same"}, "tiny", "scripted", None)["notes"] == "written by tiny"
    with pytest.raises(ValueError, match="user_setting"):
        apply_user_and_judge(BORROW_ID, {}, "oracle", "scripted", None)
    assert apply_user_and_judge(BORROW_ID, {}, "tiny", None, None) == {}  # no user declared: nothing filled in


def test_workers_are_refused_only_for_an_env_that_borrows_the_policy() -> None:
    setup_module()
    with pytest.raises(ValueError, match="borrows the policy"):
        _refuse_workers_for_a_borrowing_env(BORROW_ID, "2", {})
    assert Borrows.borrows_policy({"helper": POLICY}) and not Borrows.borrows_policy({"helper": "hf:own/model"})
    _refuse_workers_for_a_borrowing_env(BORROW_ID, "2", {"helper": "hf:own/model"})
    _refuse_workers_for_a_borrowing_env(USER_ID, "2", {})
    assert not WithUser.borrows_policy({})


def test_env_modes_and_label_keys_come_from_the_declarations() -> None:
    modes = training_env_modes()
    assert ENV_MODES == ("real", *modes) and all(modes.values())
    assert {item.id for item in all_entries() if item.env_mode} == set(modes.values())
    assert declared_label_keys(WithUser) == ("user_simulator", "grader")


def test_the_plugin_declares_its_teacher_logit_prompts() -> None:
    from types import SimpleNamespace

    from agentgym_suite.trainers.credit import get_credit_assigner
    from agentgym_suite.trainers.credit.vad import WITH_EVIDENCE, WITHOUT_EVIDENCE, evidence_prompts

    encode = lambda text: [ord(c) for c in text]  # noqa: E731  (one token per character)
    rows = [SimpleNamespace(prompt_ids=[1, 2], episode=SimpleNamespace(task_id=t)) for t in ("a", "b")]
    texts = ["first evidence", "other"]
    with pytest.raises(NotImplementedError, match="teacher_logit_prompts"):  # a plug-in without the need has none
        get_credit_assigner("grpo").teacher_logit_prompts(rows, texts, encode, 64)
    vad = get_credit_assigner("vad", top_k=8, counterfactual="unrelated")
    asked = vad.teacher_logit_prompts(rows, texts, encode, 64)  # the config's counterfactual and top-k
    pos, neg = evidence_prompts(encode, texts, [[1, 2], [1, 2]], ["a", "b"], counterfactual="unrelated",
                                max_prompt_tokens=64)
    assert asked.top_k == 8 and dict(asked.prompts) == {WITH_EVIDENCE: pos, WITHOUT_EVIDENCE: neg}
    assert set(vad.required_fields) >= {WITH_EVIDENCE, WITHOUT_EVIDENCE}

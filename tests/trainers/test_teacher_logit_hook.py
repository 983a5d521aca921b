"""The trainer's teacher-logit pass is generic: a plug-in that is not VAD, with one prompt set of its
own name, gets its teacher logits in ``CreditBatch.aux_extras`` and the student's logits gathered at
the same top-k ids in ``aux_loss``, with no edit to the trainer."""

from __future__ import annotations

import math
from typing import Any, ClassVar, Sequence

import torch
from torch import Tensor

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.credit import VOCAB_INDEX, TeacherLogitPrompts
from agentgym_suite.trainers.credit.base import AuxLossOutput, CreditBatch, CreditConfig, Encode, masked_mean
from agentgym_suite.trainers.credit.grpo import GRPOCredit, GRPOCreditConfig
from agentgym_suite.trainers.credit.self_distillation import PrivilegedTextTeacher, privileged_prefix, teacher_prompt_ids
from trainers.conftest import changed, snapshot
from trainers.fake_env import make_letter_env

NAME = "privileged_logits"
TOP_K = 4


class PrivilegedDistillCredit(GRPOCredit):
    """GRPO plus KL(teacher || student) towards the teacher's logits after the privileged prompt."""

    name: ClassVar[str] = "privileged_distill"
    config_cls: ClassVar[type[CreditConfig]] = GRPOCreditConfig
    needs_full_logits: ClassVar[bool] = True
    teacher_context: ClassVar[Any] = PrivilegedTextTeacher  # each row's privileged text, as the distillation plug-ins'
    has_aux_loss: ClassVar[bool] = True
    extra_fields: ClassVar[tuple[str, ...]] = (NAME,)
    seen: ClassVar[list[dict[str, Any]]] = []

    def teacher_logit_prompts(self, rows: Sequence[Any], texts: Sequence[str], encode: Encode,
                              max_prompt_tokens: int) -> TeacherLogitPrompts:
        prompts = []
        for row, text in zip(rows, texts):
            prefix = list(encode(privileged_prefix(text)))
            prompts.append(teacher_prompt_ids(prefix, row.prompt_ids, max_prompt_tokens + len(prefix)))
        return TeacherLogitPrompts({NAME: prompts}, top_k=TOP_K)

    def aux_loss(self, batch: CreditBatch, logprobs: Tensor, logits: Tensor | None = None) -> AuxLossOutput:
        self.check_batch(batch)
        assert logits is not None
        teacher = batch.aux_extras[NAME].to(logits.device)
        self.seen.append({"keys": sorted(batch.aux_extras), "student": tuple(logits.shape),
                          "teacher": tuple(teacher.shape)})
        t_logp = torch.log_softmax(teacher.float(), -1)
        kl = (t_logp.exp() * (t_logp - torch.log_softmax(logits.float(), -1))).sum(-1)
        loss = masked_mean(kl, batch.completion_mask.to(kl.device))
        return AuxLossOutput(0.1 * loss, {self.metric("kl"): float(loss.detach())})


def test_a_plugin_of_its_own_gets_its_teacher_logits_through_the_hook(make_config) -> None:
    PrivilegedDistillCredit.seen.clear()
    trainer = AgentGRPOTrainer(args=make_config(credit=f"{__name__}:PrivilegedDistillCredit", teacher_context="oracle",
                                                max_steps=1), env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 1 and changed(before, trainer.model)
    batch = trainer._credit_batch
    rows, tokens = batch.completion_mask.shape
    assert set(batch.aux_extras) == {NAME, VOCAB_INDEX}  # the plug-in's own name, and the kept ids
    assert batch.aux_extras[NAME].shape == batch.aux_extras[VOCAB_INDEX].shape == (rows, tokens, TOP_K)
    # aux_loss saw the student's logits gathered at the kept ids, and no ids left in its batch
    assert PrivilegedDistillCredit.seen and all(s["keys"] == [NAME] and s["student"] == s["teacher"]
                                                and s["student"][-1] == TOP_K for s in PrivilegedDistillCredit.seen)
    logged = {k: v for h in trainer.state.log_history for k, v in h.items()}
    assert math.isfinite(logged["credit/privileged_distill/kl"]) and logged["credit/privileged_distill/kl"] >= 0

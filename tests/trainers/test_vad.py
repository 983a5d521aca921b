"""VAD in the trainer: teacher logits with and without the evidence (top-k), student logits
with gradient, and the attributable-distillation loss added to GRPO's."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.agent_grpo import build_credit
from agentgym_suite.trainers.credit.vad import TRAINER_TOP_K
from agentgym_suite.trainers.logits import completion_logits, teacher_logits
from trainers.conftest import changed, snapshot
from trainers.fake_env import make_letter_env


def _logged(trainer, key):
    return [h[key] for h in trainer.state.log_history if key in h]


def test_vad_trains_with_top_k_teacher_logits(make_config):
    trainer = AgentGRPOTrainer(args=make_config(credit="vad", teacher_context="oracle", credit_params={"top_k": 8}),
                               env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 2
    assert changed(before, trainer.model)
    losses = _logged(trainer, "loss")
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    aux = _logged(trainer, "credit/vad/aux_loss")
    assert aux and all(math.isfinite(x) and x >= 0 for x in aux)
    batch = trainer._credit_batch
    assert batch.teacher_logits.shape[-1] == 8 and batch.vocab_index.shape == batch.teacher_logits.shape
    assert batch.teacher_logits_no_evidence.shape == batch.teacher_logits.shape
    # the evidence changes the teacher: with and without it the logits differ on model tokens
    mask = batch.completion_mask.bool()
    assert not torch.allclose(batch.teacher_logits[mask], batch.teacher_logits_no_evidence[mask])


def test_default_top_k_and_full_vocabulary_opt_out(make_config):
    assert build_credit(make_config(credit="vad")).config.top_k == TRAINER_TOP_K == 64
    assert build_credit(make_config(credit="vad", credit_params={"top_k": None})).config.top_k is None


def test_teacher_logits_align_with_the_completion():
    from agentgym_suite.llm.tiny import tiny_model_dir
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())).eval()
    prompt = torch.tensor([[0, 5, 6, 7], [3, 4, 5, 6]])
    pmask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    comp = torch.tensor([[9, 10, 11], [12, 13, 14]])
    full = model(input_ids=torch.cat([prompt, comp], 1), attention_mask=torch.cat([pmask, torch.ones_like(comp)], 1)).logits
    with torch.no_grad():
        got = completion_logits(model, torch.cat([prompt, comp], 1), torch.cat([pmask, torch.ones_like(comp)], 1), 3)
        assert torch.allclose(got, full[:, 3:6], atol=1e-5)
        pos, neg, idx = teacher_logits(model, (prompt, pmask), (prompt, pmask), comp, top_k=4, batch_size=1)
    assert idx.shape == (2, 3, 4) and torch.allclose(pos, neg)
    assert torch.allclose(pos, full[:, 3:6].gather(-1, idx), atol=1e-5)
    assert torch.equal(idx, full[:, 3:6].topk(4, dim=-1).indices)


@pytest.mark.slow
def test_vad_full_vocabulary_in_trajectory_layout(make_config):
    trainer = AgentGRPOTrainer(args=make_config(credit="vad", credit_params={"top_k": None}, row_layout="trajectory",
                                                prompt_format="chat", max_steps=1), env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert changed(before, trainer.model)
    assert trainer._credit_batch.vocab_index is None
    assert trainer._credit_batch.teacher_logits.shape[-1] == trainer.model.config.vocab_size

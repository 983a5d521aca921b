"""VAD in the trainer: a fixed teacher's logits with the evidence and with it ablated (top-k),
student logits with gradient, and the attributable-distillation loss added to GRPO's."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer, logprob_passes
from agentgym_suite.trainers.agent_grpo import build_credit
from agentgym_suite.trainers.credit import VOCAB_INDEX
from agentgym_suite.trainers.credit.vad import TRAINER_TOP_K, WITH_EVIDENCE, WITHOUT_EVIDENCE, vad_target
from agentgym_suite.trainers.fixed_teacher import FROZEN_COPY, PEFT_BASE, REFERENCE
from agentgym_suite.trainers.logits import completion_logits, teacher_logits
from agentgym_suite.trainers.teacher import PRIVILEGED_HEADER
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
    aux = trainer._credit_batch.aux_extras
    assert aux[WITH_EVIDENCE].shape[-1] == 8 and aux[VOCAB_INDEX].shape == aux[WITH_EVIDENCE].shape
    assert aux[WITHOUT_EVIDENCE].shape == aux[WITH_EVIDENCE].shape
    # the evidence changes the teacher: with and without it the logits differ on model tokens
    mask = trainer._credit_batch.completion_mask.bool()
    assert not torch.allclose(aux[WITH_EVIDENCE][mask], aux[WITHOUT_EVIDENCE][mask])


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
        (pos, neg), idx = teacher_logits(model, [(prompt, pmask), (prompt, pmask)], comp, top_k=4, batch_size=1)
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
    assert VOCAB_INDEX not in trainer._credit_batch.aux_extras
    assert trainer._credit_batch.aux_extras[WITH_EVIDENCE].shape[-1] == trainer.model.config.vocab_size


def _unpadded(ids: torch.Tensor, mask: torch.Tensor) -> list[int]:
    return ids[mask.bool()].tolist()


def test_after_one_update_alpha_is_not_one_and_x_minus_is_not_the_student_prompt(make_config, monkeypatch):
    # Before the fix x- was the student's prompt under the current weights, so at update time
    # log p_S = log p_T(.|x-), r = u and alpha = 1 on every token (plain privileged distillation).
    calls = []

    def spy(model, prompts, completion_ids, **kwargs):
        pos, neg = prompts  # VAD asks for x+ then x-
        calls.append({"model": model, "pos": pos, "neg": neg, "completion_ids": completion_ids, **kwargs})
        return teacher_logits(model, prompts, completion_ids, **kwargs)

    monkeypatch.setattr(logprob_passes, "teacher_logits", spy)
    trainer = AgentGRPOTrainer(args=make_config(credit="vad", teacher_context="oracle", credit_params={"top_k": 8},
                                                max_steps=1), env_factory=make_letter_env)
    generated = []
    generate = trainer._generate_and_score_completions
    monkeypatch.setattr(trainer, "_generate_and_score_completions", lambda inputs: generated.append(generate(inputs))
                        or generated[-1])
    teacher = trainer.fixed_teacher
    assert trainer.beta == 0.0 and trainer.ref_model is None
    assert teacher.kind == FROZEN_COPY and teacher.model is not trainer.model
    initial = snapshot(trainer.model)
    trainer.train()

    # the student moved, the teacher did not
    assert changed(initial, trainer.model)
    assert all(torch.equal(p, initial[n]) and not p.requires_grad for n, p in teacher.model.named_parameters())
    assert len(calls) == 1 and calls[0]["model"] is teacher.model

    # x- is the privileged prompt with the evidence ablated, not the student's prompt
    out, batch = generated[0], trainer._credit_batch
    rows = [i for i in range(batch.num_rows) if batch.completion_mask[i].any()]
    header = trainer.processing_class.encode(PRIVILEGED_HEADER, add_special_tokens=False)
    assert rows
    for i in rows:
        student = _unpadded(out["prompt_ids"][i], out["prompt_mask"][i])
        pos = _unpadded(calls[0]["pos"][0][i], calls[0]["pos"][1][i])
        neg = _unpadded(calls[0]["neg"][0][i], calls[0]["neg"][1][i])
        assert neg != student and neg != pos and len(neg) == len(pos)
        assert neg[: len(header)] == header and neg[-len(student):] == student == pos[-len(student):]

    # alpha under the updated student and the fixed teacher's stored logits
    ids = torch.cat([out["prompt_ids"], out["completion_ids"]], 1)
    mask = torch.cat([out["prompt_mask"], torch.ones_like(out["completion_ids"])], 1)
    width = out["completion_ids"].size(1)
    index = batch.aux_extras[VOCAB_INDEX]
    with torch.no_grad():
        now = completion_logits(trainer.model, ids, mask, width).gather(-1, index)
        before = completion_logits(teacher.model, ids, mask, width).gather(-1, index)  # initial weights
        (pos_again, neg_again), index_again = teacher_logits(teacher.model, [calls[0]["pos"], calls[0]["neg"]],
                                                             calls[0]["completion_ids"], top_k=8, batch_size=4)
    keep = batch.completion_mask.bool()
    assert torch.equal(index_again, index)
    assert torch.allclose(pos_again, batch.aux_extras[WITH_EVIDENCE], atol=1e-5)  # the teacher stayed fixed
    assert torch.allclose(neg_again, batch.aux_extras[WITHOUT_EVIDENCE], atol=1e-5)
    assert (now - before)[keep].abs().max() > 1e-3  # the student moved

    def alpha_share(neg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lsm = lambda x: torch.log_softmax(x.float(), -1)  # noqa: E731
        _, alpha, share = vad_target(lsm(now), lsm(batch.aux_extras[WITH_EVIDENCE]), lsm(neg), one_sided=False)
        return alpha[keep], share[keep]

    alpha, share = alpha_share(batch.aux_extras[WITHOUT_EVIDENCE])
    assert (alpha - 1).abs().max() > 0.1 and (share < 0.99).any()
    # the old construction, x- = the student's prompt under the student's weights: alpha is 1 everywhere
    legacy_alpha, legacy_share = alpha_share(now)
    assert torch.allclose(legacy_alpha, torch.ones_like(legacy_alpha), atol=1e-4)
    assert torch.allclose(legacy_share, torch.ones_like(legacy_share), atol=1e-4)

    logged = {k: _logged(trainer, f"credit/vad/{k}") for k in ("alpha_mean", "share_mean", "reg_weight_mean")}
    assert all(len(v) == 1 and math.isfinite(v[0]) for v in logged.values())
    assert logged["share_mean"][0] < 0.99 and logged["reg_weight_mean"][0] > 0.01
    assert logged["share_mean"][0] + logged["reg_weight_mean"][0] == pytest.approx(1.0, abs=1e-5)


def test_fixed_teacher_is_the_reference_model_when_trl_keeps_a_fixed_one(make_config):
    with_ref = AgentGRPOTrainer(args=make_config(credit="vad", beta=0.04), env_factory=make_letter_env)
    assert with_ref.ref_model is not None
    assert with_ref.fixed_teacher.kind == REFERENCE and with_ref.fixed_teacher.model is with_ref.ref_model
    # a synced reference model follows the policy, so it cannot be the teacher
    synced = AgentGRPOTrainer(args=make_config(credit="vad", beta=0.04, sync_ref_model=True),
                              env_factory=make_letter_env)
    assert synced.fixed_teacher.kind == FROZEN_COPY and synced.fixed_teacher.model is not synced.ref_model
    # plug-ins that do not declare needs_fixed_teacher keep the policy as teacher
    assert AgentGRPOTrainer(args=make_config(credit="sdar"), env_factory=make_letter_env).fixed_teacher is None


def test_frozen_copy_holds_the_weights_the_trainer_was_given(make_config):
    from transformers import AutoModelForCausalLM

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    with torch.no_grad():
        model.lm_head.weight.add_(0.5)  # differs from the weights on disk
    trainer = AgentGRPOTrainer(model=model, args=make_config(credit="vad"), env_factory=make_letter_env)
    frozen = dict(trainer.fixed_teacher.model.named_parameters())
    assert all(torch.equal(frozen[n], p.detach()) for n, p in model.named_parameters())


def test_peft_policy_uses_its_base_weights_as_teacher(make_config):
    peft = pytest.importorskip("peft")
    trainer = AgentGRPOTrainer(args=make_config(credit="vad", teacher_context="oracle", credit_params={"top_k": 8},
                                                max_steps=1, max_turns=1, max_completion_length=4),
                               env_factory=make_letter_env,
                               peft_config=peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0))
    assert trainer.fixed_teacher.kind == PEFT_BASE and trainer.fixed_teacher.model is None
    ids = torch.tensor([[3, 4, 5, 6, 7, 8]])
    mask = torch.ones_like(ids)
    with torch.no_grad():
        base = completion_logits(trainer.model, ids, mask, 3)
    trainer.train()
    with torch.no_grad():
        policy = completion_logits(trainer.model, ids, mask, 3)
        with trainer.fixed_teacher.weights(trainer.model) as teacher:
            fixed = completion_logits(teacher, ids, mask, 3)
    assert not torch.allclose(policy, base, atol=1e-5)  # the adapter trained
    assert torch.allclose(fixed, base, atol=1e-5)  # the teacher is the base model


def test_the_trainer_reads_the_declaration_not_the_name(make_config, monkeypatch):
    # a teacher-log-prob plug-in that declares needs_fixed_teacher gets its teacher pass on the fixed weights
    from agentgym_suite.trainers.credit.sdar import SDARCredit

    class FixedTeacherSDAR(SDARCredit):
        name = "fixed_teacher_sdar"
        needs_fixed_teacher = True

    trainer = AgentGRPOTrainer(args=make_config(credit="sdar", teacher_context="oracle", max_steps=1, max_turns=1,
                                                max_completion_length=4),
                               env_factory=make_letter_env, credit=FixedTeacherSDAR())
    assert trainer.fixed_teacher is not None and trainer.fixed_teacher.kind == FROZEN_COPY
    used = []
    logps = trainer._logps
    monkeypatch.setattr(trainer, "_logps", lambda model, *a: used.append(model) or logps(model, *a))
    trainer.train()
    assert used and all(model is trainer.fixed_teacher.model for model in used)  # the one pass: the teacher's


def test_vad_target_trains_on_the_target_alone(make_config):
    trainer = AgentGRPOTrainer(args=make_config(credit="vad", teacher_context="oracle",
                                                credit_params={"top_k": 8, "primary": "target"}),
                               env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.credit.config.reward_coef == 0.0
    assert changed(before, trainer.model)  # no advantage anywhere, yet the target moves the policy
    logged = _logged(trainer, "credit/vad/reward_coef")
    assert logged and all(x == 0.0 for x in logged)
    aux = _logged(trainer, "credit/vad/aux_loss")
    assert aux and all(math.isfinite(x) and x >= 0 for x in aux)

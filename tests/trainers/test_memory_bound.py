"""Bounded memory: no forward/backward pass holds more than ``max_rows_per_pass`` rows, cutting a
micro-batch into passes leaves the gradient unchanged, padding rows never dilute any TRL loss, and
several optimizer updates per generation batch."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.memory_bound import LOSS_TYPES, check_loss_settings, row_passes
from trainers.conftest import tiny_config
from trainers.fake_env import make_letter_env

LONG = dict(max_turns=5, per_device_train_batch_size=2, num_generations=2, max_completion_length=5)
FAST_LOSSES = ("dapo", "grpo", "dr_grpo", "bnpo")
"""One loss type of each aggregation in the default suite; the others are marked slow."""


def _record_rows(trainer) -> list[int]:
    """Rows of every TRL log-prob pass (with and without gradient) the model runs."""
    seen: list[int] = []
    forward = trainer.model.forward

    def recorded(*args, **kwargs):
        if "fused_lm_head" in kwargs:
            seen.append(int(kwargs["input_ids"].shape[0]))
        return forward(*args, **kwargs)

    trainer.model.forward = recorded
    return seen


@pytest.mark.parametrize("bound", [3, pytest.param(1, marks=pytest.mark.slow)])
def test_no_pass_exceeds_the_row_bound(make_config, bound):
    # 5-turn episodes: 2 episodes x 5 rows = 10 rows per micro-batch, teacher passes included (sdar)
    trainer = AgentGRPOTrainer(args=make_config(credit="sdar", max_rows_per_pass=bound, max_steps=1, **LONG),
                               env_factory=lambda: make_letter_env(horizon=5))
    seen = _record_rows(trainer)
    trainer.train()
    rows = [h["episodes/rows"] for h in trainer.state.log_history if "episodes/rows" in h]
    assert rows and rows[0] > 2 * bound, "episodes long enough to need several passes"
    assert seen and max(seen) <= bound
    assert len(seen) >= 2 * math.ceil(rows[0] / bound)  # teacher and training passes, each cut


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A trainer (sdar: an auxiliary loss too) and one scored generation batch of long episodes."""
    args = tiny_config(str(tmp_path_factory.mktemp("bound")), credit="sdar", **LONG)
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=5))
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    row = trainer.train_dataset[0]
    inputs = [{"prompt": row["prompt"], "task_id": row["task_id"], "env_seed": row["env_seed"]}] * 2
    return trainer, trainer._generate_and_score_completions(inputs)


def _gradient(trainer, inputs, bound, loss_type) -> tuple[float, list[torch.Tensor]]:
    trainer.args.max_rows_per_pass = bound
    trainer.loss_type = loss_type
    trainer.model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(trainer.model, dict(inputs))
    loss.backward()
    return float(loss.detach()), [p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]


def _padded(inputs: dict, extra: int) -> dict:
    """``inputs`` with ``extra`` more all-masked padding rows."""
    rows = inputs["completion_mask"].shape[0]
    out = {}
    for key, value in inputs.items():
        if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape[0] == rows:
            pad = value[:1].repeat(extra, *([1] * (value.dim() - 1))).clone()
            if key in ("completion_mask", "advantages", "tool_mask"):
                pad.zero_()
            if key == "row_index":
                pad.fill_(-1)
            out[key] = torch.cat([value, pad])
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("loss_type", [t if t in FAST_LOSSES else pytest.param(t, marks=pytest.mark.slow)
                                       for t in LOSS_TYPES])
def test_passes_and_padding_leave_the_gradient_unchanged(scored, loss_type):
    trainer, inputs = scored
    rows = inputs["completion_mask"].shape[0]
    assert rows >= 6
    loss, whole = _gradient(trainer, inputs, None, loss_type)
    cut_loss, cut = _gradient(trainer, inputs, 3, loss_type)  # ceil(rows / 3) passes, backward in each
    pad_loss, padded = _gradient(trainer, _padded(inputs, rows // 2), None, loss_type)
    assert any(g.abs().sum() > 0 for g in whole)
    assert cut_loss == pytest.approx(loss, rel=1e-4, abs=1e-6)
    assert pad_loss == pytest.approx(loss, rel=1e-4, abs=1e-6), f"{loss_type}: padding rows change the loss"
    for a, b, c in zip(whole, cut, padded):
        torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-4)
        torch.testing.assert_close(c, a, atol=1e-6, rtol=1e-4)


def test_passes_cut_rows_longest_first_and_keep_every_row(scored):
    _, inputs = scored
    passes = row_passes(inputs, 3)
    rows = inputs["completion_mask"].shape[0]
    assert len(passes) == math.ceil(rows / 3) and all(p["completion_mask"].shape[0] <= 3 for p in passes)
    index = torch.cat([p["row_index"] for p in passes])
    assert sorted(index.tolist()) == sorted(inputs["row_index"].tolist())
    assert all(int(p["micro_batch_tokens"]) == int(inputs["completion_mask"].sum()) for p in passes)


def test_several_optimizer_updates_per_generation_batch(make_config):
    args = make_config(gradient_accumulation_steps=2, optimizer_steps_per_generation=2, max_steps=2)
    assert (args.steps_per_generation, args.gradient_accumulation_steps) == (2, 1)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    batches = []
    score = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: batches.append(score(inputs)) or batches[-1]
    trainer.train()
    # one generation batch of 2 x 4 episodes, two optimizer updates on its two halves (old log-probs computed)
    assert trainer.state.global_step == 2 and len(batches) == 1
    assert "old_per_token_logps" in batches[0]


def test_optimizer_steps_must_divide_the_generation_batch(tmp_path):
    with pytest.raises(ValueError, match="optimizer_steps_per_generation=3 must be >= 1 and divide"):
        tiny_config(str(tmp_path), gradient_accumulation_steps=2, optimizer_steps_per_generation=3)
    with pytest.raises(ValueError, match="max_rows_per_pass must be >= 1"):
        AgentGRPOConfig(output_dir=str(tmp_path), max_rows_per_pass=0, use_cpu=True, bf16=False)


def test_unrescalable_loss_settings_are_refused():
    check_loss_settings("dapo", bounded=False, entropy_bonus=True, router_aux_loss=False)  # TRL's own normalisation
    with pytest.raises(ValueError, match="entropy bonus"):
        check_loss_settings("grpo", bounded=False, entropy_bonus=True, router_aux_loss=False)
    with pytest.raises(ValueError, match="entropy bonus"):
        check_loss_settings("dapo", bounded=True, entropy_bonus=True, router_aux_loss=False)
    with pytest.raises(ValueError, match="router"):
        check_loss_settings("bnpo", bounded=False, entropy_bonus=False, router_aux_loss=True)
    with pytest.raises(ValueError, match="not known"):
        check_loss_settings("ppo", bounded=False, entropy_bonus=False, router_aux_loss=False)

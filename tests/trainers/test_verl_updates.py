"""verl-agent's update schedule (rows_per_update), its clamped KL and its entropy bonus."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer, verl_updates  # noqa: F401
from trainers.conftest import changed, count_verl_updates, snapshot
from trainers.fake_env import make_letter_env


def _chunk(tokens_per_row: list[int]) -> dict[str, torch.Tensor]:
    width = max(tokens_per_row)
    mask = torch.tensor([[1] * t + [0] * (width - t) for t in tokens_per_row])
    return {"completion_mask": mask, "prompt_mask": torch.ones(len(tokens_per_row), 2, dtype=torch.long)}


def test_updates_are_sized_from_the_rows_as_verl_agent_sizes_them():
    assert verl_updates.updates_for(4000, 256) == 16
    assert verl_updates.updates_for(4097, 256) == 17
    assert verl_updates.updates_for(100, 256) == 1
    assert verl_updates.updates_for(6400, 256, processes=8, pad_rows_per_process=32) == 25  # no cap
    # WebShop on 8 GPUs: adjust_batch pads to a multiple of 16 x 8 = 128 rows, above the 64-row mini-batch
    webshop = verl_updates.verl_schedule(1000, 64, processes=8, pad_rows_per_process=16)
    assert (webshop.padded_rows, webshop.duplicated_rows, webshop.updates) == (1024, 24, 16)
    short = verl_updates.verl_schedule(2500, 256, processes=2, pad_rows_per_process=32, epochs=2)
    assert short.padded_rows == 2560 and short.update_rows == (256,) * 10 * 2
    last = verl_updates.verl_schedule(2600, 256, processes=2, pad_rows_per_process=32)
    assert last.update_rows[-1] == 64 and last.loss_weights[-1] == 0.25  # divided by the full accumulation count
    with pytest.raises(ValueError, match="one row per process"):
        verl_updates.verl_schedule(100, 4, processes=8)


def test_update_boundaries_follow_verl_rows_inside_the_micro_batches():
    schedule = verl_updates.verl_schedule(2600, 256, processes=2, pad_rows_per_process=32)  # 2624 = 10 x 256 + 64
    # one process's 1312 rows: verl's boundaries exactly, the short last update included
    assert verl_updates.update_row_ends(schedule, 1312) == [*range(128, 1281, 128), 1312]
    ends = verl_updates.update_row_ends(schedule, 8 * 164)  # 11 updates over 8 micro-batches: no cap
    pieces = verl_updates.update_pieces([164] * 8, ends)
    assert sum(p.ends_update for p in pieces) == 11 == schedule.updates
    assert [(p.micro_batch, p.start, p.stop, p.update) for p in pieces[:3]] == [(0, 0, 128, 0), (0, 128, 164, 1),
                                                                               (1, 0, 92, 1)]
    # several updates end inside one micro-batch; every piece lies in one update and one micro-batch
    pieces = verl_updates.update_pieces([4] * 3, [2, 3, 4, 6, 12])
    assert [(p.micro_batch, p.start, p.stop, p.update, p.ends_update) for p in pieces] == [
        (0, 0, 2, 0, True), (0, 2, 3, 1, True), (0, 3, 4, 2, True), (1, 0, 2, 3, True), (1, 2, 4, 4, False),
        (2, 0, 4, 4, True)]
    # only with more updates than rows are updates merged (one per row)
    tiny = verl_updates.verl_schedule(3, 1, processes=1, pad_rows_per_process=8)  # 8 padded rows, 8 updates
    assert verl_updates.update_row_ends(tiny, 4) == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="last row"):
        verl_updates.update_pieces([4, 4], [3, 7])
    lines = verl_updates.schedule_departures(32)
    assert not any("steps_per_generation" in line for line in lines) and "duplicated" in lines[-1]


def test_each_update_is_a_token_mean_over_its_own_rows():
    chunks = [_chunk([3, 1]), _chunk([2, 2]), _chunk([4, 4]), _chunk([1, 1])]  # 4, 4, 8, 2 tokens; 18 in all
    updates = verl_updates.plan_updates(chunks, rows=8, rows_per_update=4, sync=None)  # 2 updates: chunks {0,1}, {2,3}
    assert updates == 2
    passes = [p for c in chunks for p in verl_updates.update_passes(c, None)]
    scales = [float(part[verl_updates.UPDATE_SCALE]) for part, _ in passes]
    assert scales == pytest.approx([18 / 8, 18 / 8, 18 / 10, 18 / 10])
    # TRL divides each micro-batch's token sum by the generation batch's 18 tokens; times the scale,
    # the two updates' losses are token means over their own 8 and 10 tokens
    assert [s / 18 for s in scales] == pytest.approx([1 / 8, 1 / 8, 1 / 10, 1 / 10])
    # an auxiliary loss (a token mean over the pass / 4 accumulation steps) becomes a token mean over the update
    assert [float(part[verl_updates.UPDATE_SHARE]) for part, _ in passes] == pytest.approx(
        [4 * 4 / 8, 4 * 4 / 8, 4 * 8 / 10, 4 * 2 / 10])
    assert [planned.piece.ends_update for _, planned in passes] == [False, True, False, True]


def test_an_update_ending_inside_a_micro_batch_cuts_it_into_passes():
    chunks = [_chunk([1, 2, 3]), _chunk([1, 1, 1])]  # 6 rows, 3 per update: the boundary halves nothing
    assert verl_updates.plan_updates(chunks, rows=6, rows_per_update=2, sync=None) == 3  # ends at rows 2, 4, 6
    first = verl_updates.update_passes(chunks[0], None)
    assert [int(part["completion_mask"].shape[0]) for part, _ in first] == [2, 1]
    assert [float(part[verl_updates.UPDATE_SCALE]) for part, _ in first] == pytest.approx([9 / 3, 9 / 4])
    assert [p.piece.ends_update for _, p in first] == [True, False]
    second = verl_updates.update_passes(chunks[1], 1)  # max_rows_per_pass=1: passes within each piece
    assert [int(part["completion_mask"].shape[0]) for part, _ in second] == [1, 1, 1]
    assert [p is not None and p.piece.ends_update for _, p in second] == [True, False, True]
    assert second[-1][1].trainer_steps and not first[0][1].trainer_steps


def test_low_var_kl_is_k3_clamped_at_ten_without_gradient_there():
    logps = torch.tensor([-1.0, -0.5, -20.0], requires_grad=True)
    ref = torch.tensor([-1.2, -0.5, -1.0])
    kl = verl_updates.low_var_kl(logps, ref)
    d = (ref - logps).detach()
    expected = torch.exp(d) - d - 1
    assert torch.allclose(kl[:2].detach(), expected[:2]) and float(kl[1].detach()) == 0.0
    assert float(kl[2].detach()) == 10.0  # exp(19) - 19 - 1 clamped
    kl.sum().backward()
    assert logps.grad is not None and float(logps.grad[2]) == 0.0 and float(logps.grad[0]) != 0.0


def test_rows_per_update_takes_verl_agents_optimizer_steps_beyond_the_micro_batches(make_config, monkeypatch):
    # 8 episodes of 1-2 turns: 8-16 rows in 2 micro-batches, 2 rows per update: 4-8 updates per generation batch
    args = make_config(per_device_train_batch_size=4, steps_per_generation=2, rows_per_update=2, max_steps=2,
                       max_turns=2, max_rows_per_pass=3)
    assert args.gradient_accumulation_steps == args.steps_per_generation == 2  # one trainer step per generation
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    rows, steps = count_verl_updates(trainer, monkeypatch)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 2 and changed(before, trainer.model)
    assert len(rows) == 2 and all(r >= 8 for r in rows), rows
    expected = [math.ceil(r / 2) for r in rows]  # verl-agent: ceil(rows / mini-batch), one process, no padding
    assert steps[0] == sum(expected) > 2 * args.steps_per_generation  # more than one step per micro-batch
    planned = [int(h["updates_per_generation"]) for h in trainer.state.log_history if "updates_per_generation" in h]
    assert planned == expected
    assert "grad_norm" in set().union(*(h.keys() for h in trainer.state.log_history))
    assert "old_per_token_logps" in trainer._buffered_inputs[0]  # later updates clip against the rollout policy


@pytest.mark.slow
def test_recipe_loss_terms_train_with_passes(make_config):
    args = make_config(per_device_train_batch_size=2, steps_per_generation=2, rows_per_update=4, max_steps=1,
                       beta=0.01, kl_estimator="low_var_kl", use_bias_correction_kl=False, entropy_coef=0.001,
                       delta=3.0, max_rows_per_pass=2)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    assert (trainer.beta, trainer._kl_coef, trainer.entropy_coef, trainer._entropy_coef) == (0.0, 0.01, 0.0, 0.001)
    assert trainer.ref_model is not None or trainer.args.lora_r  # the reference model exists for the KL
    before = snapshot(trainer.model)
    trainer.train()
    logged = {k: v for h in trainer.state.log_history for k, v in h.items()}
    assert changed(before, trainer.model) and "kl" in logged and math.isfinite(logged["kl"])


def test_rows_per_update_settings_are_checked(make_config):
    with pytest.raises(ValueError, match="rows_per_update must be >= 1"):
        make_config(rows_per_update=0)
    with pytest.raises(ValueError, match="set only one"):
        make_config(rows_per_update=8, optimizer_steps_per_generation=1)
    with pytest.raises(ValueError, match="token-sum loss_type"):
        make_config(rows_per_update=8, loss_type="grpo")
    with pytest.raises(ValueError, match="low_var_kl"):
        make_config(kl_estimator="low_var_kl", loss_type="bnpo")

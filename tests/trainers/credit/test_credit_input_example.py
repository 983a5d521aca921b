"""The worked example of a credit plug-in with an input of its own (``examples/length_penalty_credit.py``):
added by creating that file only, it passes the shared contract, its input reaches it through the
trainer's inputs step, and the trainer trains it by its import path."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch, get_credit_assigner
from agentgym_suite.trainers.distributed import merge_credit_batches, portable_batch
from trainers.conftest import changed, snapshot
from trainers.credit.conftest import build_batch
from trainers.credit.test_credit_contract import TestCreditContract as _SharedContract
from trainers.fake_env import make_letter_env

IMPORT_PATH = "length_penalty_credit:LengthPenaltyCredit"


@pytest.fixture
def plugin(on_path: None) -> CreditAssigner:
    return get_credit_assigner(IMPORT_PATH)


@pytest.fixture
def make_batch(plugin: CreditAssigner):
    """Batches with the example's input computed by its own provider (it is not in the registry)."""
    return lambda rows, **kw: build_batch(rows, row_inputs=plugin.row_inputs, **kw)


class TestExampleCreditContract(_SharedContract):
    """Every check the registered plug-ins pass, run on the example (missing input named included)."""


def test_penalty_by_hand(plugin: CreditAssigner, make_batch) -> None:
    # two rows of one group, equal returns; the reply lengths (the mask's trained tokens) are 4 and 2,
    # so with per_token=0.25 the scores are 1/2 and 1/1.5: the longer reply gets the negative advantage
    rows = [dict(group="g", traj="a", ret=1.0), dict(group="g", traj="b", ret=1.0)]
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]])
    batch = make_batch(rows, mask=mask, tokens=5)
    assert batch.extras["reply_tokens"] == [4, 2]
    out = get_credit_assigner(IMPORT_PATH, per_token=0.25).advantages(batch)
    assert out.advantages[0, 0] < 0 < out.advantages[1, 0]
    assert out.metrics["credit/length_penalty/reply_tokens_mean"] == pytest.approx(3.0)
    picked = batch.select([1])  # micro-batches carry the input
    assert picked.extras["reply_tokens"] == [2]
    merged, offsets = merge_credit_batches([portable_batch(batch.select([0])), portable_batch(picked)])
    assert offsets == [0, 1] and merged.extras["reply_tokens"] == [4, 2]  # so does the gathering over processes


def test_trains_a_step_and_its_input_comes_from_the_rows(on_path: None, make_config) -> None:
    trainer = AgentGRPOTrainer(args=make_config(credit=IMPORT_PATH, credit_params={"per_token": 0.01}, max_steps=1),
                               env_factory=make_letter_env)
    seen: list[CreditBatch] = []
    advantages = trainer.credit.advantages
    trainer.credit.advantages = lambda batch: seen.append(batch) or advantages(batch)  # type: ignore[method-assign]
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 1 and changed(before, trainer.model)
    [batch] = seen
    lengths = batch.extras["reply_tokens"]
    assert len(lengths) == batch.num_rows and all(n >= 1 for n in lengths)
    assert all(n >= m for n, m in zip(lengths, batch.completion_mask.sum(dim=1).tolist()))  # trained <= generated
    logged = {k: v for h in trainer.state.log_history for k, v in h.items()}
    assert logged["credit/length_penalty/reply_tokens_mean"] == pytest.approx(sum(lengths) / len(lengths))
    assert math.isfinite(logged["loss"])

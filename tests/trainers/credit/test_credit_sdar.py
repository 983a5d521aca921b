"""SDAR gate, loss value and gradient direction; GRPO+OPSD (beta=0) and OPSD."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner
from agentgym_suite.trainers.credit.sdar import SDARCreditConfig


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def two_token_batch() -> CreditBatch:
    """One group of two rows; row 0 has tokens l = [-1, -2] and teacher [-0.5, -2.5]."""
    return CreditBatch(
        group_ids=["g", "g"], traj_ids=["a", "b"], turn_idx=[0, 0], roles=["agent"] * 2,
        returns=torch.tensor([1.0, 0.0]), invalid=torch.zeros(2, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 1, 0], [0, 0, 0]]),
        teacher_logprobs=torch.tensor([[-0.5, -2.5, 7.0], [0.0, 0.0, 0.0]]),
    )


def current_logprobs() -> torch.Tensor:
    return torch.tensor([[-1.0, -2.0, -9.0], [-1.0, -1.0, -1.0]], requires_grad=True)


def test_sdar_gate_loss_and_gradient_by_hand() -> None:
    # gap = [0.5, -0.5]; gate = sigmoid(5 * gap) = [0.924142, 0.075858]
    # L = mean(g * gap) = (0.924142 * 0.5 - 0.075858 * 0.5) / 2 = 0.212071; total = 0.01 * L
    g1, g2 = sig(2.5), sig(-2.5)
    loss_by_hand = (g1 * 0.5 + g2 * -0.5) / 2
    lp = current_logprobs()
    aux = get_credit_assigner("sdar").aux_loss(two_token_batch(), lp)
    assert aux.loss.item() == pytest.approx(0.01 * loss_by_hand, rel=1e-5)
    assert aux.metrics["credit/sdar/loss"] == pytest.approx(loss_by_hand, rel=1e-5)
    assert aux.metrics["credit/sdar/gate_mean"] == pytest.approx(0.5, abs=1e-6)
    assert aux.metrics["credit/sdar/gate_active_ratio"] == pytest.approx(0.5)
    assert aux.metrics["credit/sdar/teacher_gap_mean"] == pytest.approx(0.0, abs=1e-6)
    aux.loss.backward()
    assert lp.grad is not None
    # dL/dl = -lambda * g / N: negative, so a descent step raises the sampled tokens' log-prob,
    # most where the teacher endorses them.
    assert lp.grad[0, :2].tolist() == pytest.approx([-0.01 * g1 / 2, -0.01 * g2 / 2], rel=1e-5)
    assert (lp.grad[0, 2] == 0) and (lp.grad[1] == 0).all()


def test_descent_step_raises_endorsed_tokens_more() -> None:
    lp = current_logprobs()
    get_credit_assigner("sdar").aux_loss(two_token_batch(), lp).loss.backward()
    assert lp.grad is not None
    step = -lp.grad[0, :2]
    assert (step > 0).all() and step[0] > 10 * step[1]


def test_code_default_lambda_is_reachable() -> None:
    aux = get_credit_assigner("sdar", lambda_=0.1, beta=5.0).aux_loss(two_token_batch(), current_logprobs())
    assert aux.loss.item() == pytest.approx(0.1 * (sig(2.5) - sig(-2.5)) * 0.25, rel=1e-5)


def test_grpo_plus_opsd_has_constant_half_gate() -> None:
    plugin = get_credit_assigner("sdar", beta=0.0)
    aux = plugin.aux_loss(two_token_batch(), current_logprobs())
    assert aux.metrics["credit/sdar/gate_mean"] == pytest.approx(0.5)
    assert aux.metrics["credit/sdar/gate_active_ratio"] == 0.0  # g == 0.5 is not > 0.5
    assert aux.loss.item() == pytest.approx(0.01 * 0.5 * 0.0, abs=1e-8)  # mean gap is 0 here
    adv = plugin.advantages(two_token_batch()).advantages
    grpo = get_credit_assigner("grpo").advantages(two_token_batch()).advantages
    assert torch.equal(adv, grpo)


def test_opsd_is_the_gated_loss_alone_with_the_scripts_coefficient() -> None:
    # The released opsd_trainer scripts (examples/opsd_trainer/run_*.sh) set sdar_coef=0.01,
    # gate_beta=5.0 and pg_loss_coef=0; verl's dp_actor then forms
    # policy_loss = pg_loss * pg_loss_coef + sdar_loss * sdar_loss_coef.
    # gate = sigmoid(5 * [0.5, -0.5]); L = (0.924142 * 0.5 - 0.075858 * 0.5) / 2 = 0.212071; loss = 0.01 * L
    plugin = get_credit_assigner("opsd")
    assert (plugin.config.lambda_, plugin.config.beta, plugin.config.pg_coef) == (0.01, 5.0, 0.0)
    assert (plugin.advantages(two_token_batch()).advantages == 0).all()
    aux = plugin.aux_loss(two_token_batch(), current_logprobs())
    assert aux.loss.item() == pytest.approx(0.01 * 0.2120711, rel=1e-5)
    assert aux.loss.item() == pytest.approx(0.01 * (sig(2.5) - sig(-2.5)) * 0.25, rel=1e-5)


def test_sdar_advantages_are_grpo() -> None:
    sdar = get_credit_assigner("sdar").advantages(two_token_batch()).advantages
    assert torch.equal(sdar, get_credit_assigner("grpo").advantages(two_token_batch()).advantages)


def test_logprob_shape_mismatch_is_explained() -> None:
    with pytest.raises(ValueError, match="rows, tokens"):
        get_credit_assigner("sdar").aux_loss(two_token_batch(), torch.zeros(2, 4))


@pytest.mark.parametrize(("params", "match"), [(dict(beta=-1.0), "beta must be >= 0"), (dict(lambda_=-1), "lambda_")])
def test_config_validation(params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SDARCreditConfig(**params)

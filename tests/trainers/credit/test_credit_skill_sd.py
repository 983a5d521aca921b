"""Skill-SD's importance-weighted k3 term, by hand."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner
from agentgym_suite.trainers.credit.skill_sd import skill_sd_terms


def batch() -> CreditBatch:
    """Token 0: l_old = -1.2, l_T = -0.7; token 1: all -2; token 2 masked."""
    return CreditBatch(
        group_ids=["g"], traj_ids=["a"], turn_idx=[0], roles=["agent"],
        returns=torch.tensor([1.0]), invalid=torch.zeros(1, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 1, 0]]),
        old_logprobs=torch.tensor([[-1.2, -2.0, 0.0]]), teacher_logprobs=torch.tensor([[-0.7, -2.0, 50.0]]),
    )


def test_k3_term_by_hand() -> None:
    # rho = exp(-1 - -1.2) = exp(0.2) = 1.221403; d = -0.7 - -1 = 0.3
    # k3 = exp(0.3) - 1 - 0.3 = 0.049859; token 1: rho = 1, k3 = 0
    # loss = 0.001 * (1.221403 * 0.049859 + 0) / 2
    rho, k3 = math.exp(0.2), math.exp(0.3) - 1.3
    lp = torch.tensor([[-1.0, -2.0, -3.0]], requires_grad=True)
    aux = get_credit_assigner("skill_sd").aux_loss(batch(), lp)
    assert aux.loss.item() == pytest.approx(0.001 * rho * k3 / 2, rel=1e-5)
    assert aux.metrics["credit/skill_sd/k3_mean"] == pytest.approx(k3 / 2, rel=1e-5)
    aux.loss.backward()
    assert lp.grad is not None
    # d(rho * k3)/dl = rho * k3 + rho * (1 - e^d) = -rho * d: pulls l up towards the teacher.
    assert lp.grad[0, 0].item() == pytest.approx(-0.001 * rho * 0.3 / 2, rel=1e-4)
    assert lp.grad[0, 1].item() == pytest.approx(0.0, abs=1e-9)
    assert lp.grad[0, 2].item() == 0.0


def test_caps_keep_terms_finite() -> None:
    mask = torch.ones(1, 2)
    lp = torch.tensor([[0.0, -40.0]], requires_grad=True)
    rho, k3, loss = skill_sd_terms(lp, torch.tensor([[-30.0, -40.0]]), torch.tensor([[0.0, -10.0]]), mask)
    assert rho[0, 0].item() == pytest.approx(math.exp(10.0), rel=1e-5)  # ratio capped at e^10
    assert k3[0, 1].item() == pytest.approx(math.exp(20.0) - 1 - 30.0, rel=1e-5)  # exponent capped at 20
    assert torch.isfinite(loss)
    loss.backward()
    assert lp.grad is not None and torch.isfinite(lp.grad).all()


def test_k3_is_nonnegative() -> None:
    gen = torch.Generator().manual_seed(3)
    lp = -torch.rand(4, 8, generator=gen) * 4
    _, k3, _ = skill_sd_terms(lp, lp, -torch.rand(4, 8, generator=gen) * 4, torch.ones(4, 8))
    assert (k3 >= -1e-6).all()


def test_advantages_are_grpo() -> None:
    b = batch()
    assert torch.equal(get_credit_assigner("skill_sd").advantages(b).advantages,
                       get_credit_assigner("grpo").advantages(b).advantages)

"""RLSD token weighting and the linear decay of lambda 0.5 -> 0 over 100 steps."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner
from agentgym_suite.trainers.credit.rlsd import RLSDCreditConfig, decayed_lambda

A = 0.5 / (math.sqrt(0.5) + 1e-6)  # GRPO: returns [1, 0], mean 0.5, unbiased std sqrt(0.5)


def batch(step: int = 0) -> CreditBatch:
    """Rows with A = +A and -A; gaps (teacher - old) [0.1, -0.5, 0.0] on both."""
    old = torch.full((2, 4), -1.0)
    teacher = old + torch.tensor([[0.1, -0.5, 0.0, 5.0], [0.1, -0.5, 0.0, 5.0]])
    return CreditBatch(
        group_ids=["g", "g"], traj_ids=["a", "b"], turn_idx=[0, 0], roles=["agent"] * 2,
        returns=torch.tensor([1.0, 0.0]), invalid=torch.zeros(2, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 1, 1, 0], [1, 1, 1, 0]]),
        old_logprobs=old, teacher_logprobs=teacher, step=step,
    )


def weights(lam: float, sign: float) -> list[float]:
    ratio = [min(max(math.exp(sign * g), 0.8), 1.2) for g in (0.1, -0.5, 0.0)]
    return [(1 - lam) + lam * r for r in ratio]


# The original RLSDRayTrainer counts verl's global_steps from 1 (set to 0, then += 1 before the
# first step) and _get_rlsd_lambda gives lambda0 * (1 - step / warmdown_steps), 0 from warmdown_steps
# on. CreditBatch.step counts the steps completed before the batch, so batch step s trains step s + 1.
@pytest.mark.parametrize(("step", "lam"), [(0, 0.495), (49, 0.25), (98, 0.005), (99, 0.0), (150, 0.0)])
def test_rlsd_weighting_and_decay(step: int, lam: float) -> None:
    out = get_credit_assigner("rlsd").advantages(batch(step))
    assert out.metrics["credit/rlsd/lambda"] == pytest.approx(lam)
    assert (out.advantages[0, :3] / A).tolist() == pytest.approx(weights(lam, 1.0), rel=1e-5)
    assert (out.advantages[1, :3] / -A).tolist() == pytest.approx(weights(lam, -1.0), rel=1e-5)
    assert (out.advantages[:, 3] == 0).all()


def test_hand_numbers_on_the_first_batch() -> None:
    # first batch = verl step 1: lambda = 0.5 * (1 - 1/100) = 0.495
    # A > 0: exp([0.1, -0.5, 0]) = [1.105171, 0.606531, 1] -> clip [1.105171, 0.8, 1]
    #        weight = 0.505 + 0.495 * clip = [1.0520596, 0.901, 1.0]
    # A < 0: exp([-0.1, 0.5, 0]) = [0.904837, 1.648721, 1] -> clip [0.904837, 1.2, 1]
    #        weight = [0.9528945, 1.099, 1.0]
    out = get_credit_assigner("rlsd").advantages(batch(0)).advantages
    assert (out[0, :3] / A).tolist() == pytest.approx([1.0520596, 0.901, 1.0], abs=1e-6)
    assert (out[1, :3] / -A).tolist() == pytest.approx([0.9528945, 1.099, 1.0], abs=1e-6)


def test_decay_schedule() -> None:
    assert [decayed_lambda(0.5, s, 100) for s in (1, 10, 99, 100, 1000)] == pytest.approx([0.495, 0.45, 0.005, 0, 0])
    assert decayed_lambda(0.5, 500, 0) == 0.5


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="clip_eps"):
        RLSDCreditConfig(clip_eps=1.5)
    with pytest.raises(ValueError, match="decay_steps"):
        RLSDCreditConfig(decay_steps=-1)

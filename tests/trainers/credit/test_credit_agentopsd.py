"""AgentOPSD multipliers from a given evidence sequence, by hand, at turn and token level."""

from __future__ import annotations

import math

import pytest
import torch

from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner
from agentgym_suite.trainers.credit.agentopsd import AgentOPSDCreditConfig

# Evidence e = [0.5, -1.0, 2.0] with prior V_0 = 0.5 (logit 0):
#   B = sigmoid([0.5, -0.5, 1.5]) = [0.622459, 0.377541, 0.817574]
#   dB = [0.122459, -0.244919, 0.440034]; population z = [0.059316, -1.253321, 1.194005]
#   m (A > 0) = clip(1 + 0.2 z, 0.8, 1.2) = [1.011863, 0.8, 1.2]
#   factor = 0.5 + 0.5 m = [1.005932, 0.9, 1.1]
FACTOR_POS = [1.0059316, 0.9, 1.1]


def reference_factors(evidence: list[float], prior: float, sign: float, token: bool = False) -> list[float]:
    """Independent scalar re-derivation of the AgentOPSD factor (lambda 0.5, b 0.2), with the
    original's z-score denominators: std + 1e-6 over turns (compute_opsd_turn_advantage),
    sqrt(var + 1e-6) + 1e-6 over tokens (compute_opsd_token_advantage)."""
    logit, prev, revisions = math.log(prior / (1 - prior)), prior, []
    for e in evidence:
        logit += e
        b = min(max(1 / (1 + math.exp(-logit)), 1e-6), 1 - 1e-6)
        revisions.append(b - prev)
        prev = b
    mu = sum(revisions) / len(revisions)
    var = sum((r - mu) ** 2 for r in revisions) / len(revisions)
    scale = math.sqrt(var + 1e-6) + 1e-6 if token else math.sqrt(var) + 1e-6
    return [0.5 + 0.5 * min(max(1 + 0.2 * sign * (r - mu) / scale, 0.8), 1.2) for r in revisions]


def turn_batch(returns: tuple[float, float] = (1.0, 0.0)) -> CreditBatch:
    """Group g: trajectory a (3 turns, evidence [0.5, -1, 2]), trajectory b (1 turn)."""
    mask = torch.tensor([[1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 1, 0]])
    old = torch.zeros(4, 3)
    teacher = torch.tensor([[0.25, 0.25, 100.0], [-0.5, -0.5, 100.0], [1.5, 0.5, 100.0], [0.3, 0.1, 100.0]])
    return CreditBatch(
        group_ids=["g"] * 4, traj_ids=["a", "a", "a", "b"], turn_idx=[0, 1, 2, 0], roles=["agent"] * 4,
        returns=torch.tensor([returns[0]] * 3 + [returns[1]]), invalid=torch.zeros(4, dtype=torch.bool),
        completion_mask=mask, old_logprobs=old, teacher_logprobs=teacher,
    )


def test_reference_matches_the_hand_numbers() -> None:
    assert reference_factors([0.5, -1.0, 2.0], 0.5, 1.0) == pytest.approx(FACTOR_POS, abs=1e-6)


def test_turn_multipliers_by_hand() -> None:
    out = get_credit_assigner("agentopsd").advantages(turn_batch())
    grpo = get_credit_assigner("grpo").advantages(turn_batch()).advantages
    # GRPO over rows: scores [1, 1, 1, 0], mean 0.75, std 0.5 -> [0.25, 0.25, 0.25, -0.75] / 0.5
    assert torch.allclose(grpo[:, 0], torch.tensor([0.5, 0.5, 0.5, -1.5]), atol=1e-5)
    factor = out.advantages[:, 0] / grpo[:, 0]
    assert factor.tolist() == pytest.approx(FACTOR_POS + [1.0], abs=1e-5)  # 1-turn trajectory: 1
    assert (out.advantages[:, 2] == 0).all()
    assert out.metrics["credit/agentopsd/multiplier_max"] == pytest.approx(1.1, abs=1e-6)
    assert out.metrics["credit/agentopsd/multiplier_min"] == pytest.approx(0.9, abs=1e-6)


def test_negative_advantage_flips_the_direction_not_the_sign() -> None:
    # returns a = 0, b = 1: trajectory a now has A < 0, so z enters with the opposite sign.
    # V_0 is the mean over trajectories (one value each): (0 + 1) / 2 = 0.5.
    out = get_credit_assigner("agentopsd").advantages(turn_batch((0.0, 1.0)))
    grpo = get_credit_assigner("grpo").advantages(turn_batch((0.0, 1.0))).advantages
    factor = (out.advantages[:3, 0] / grpo[:3, 0]).tolist()
    assert factor == pytest.approx(reference_factors([0.5, -1.0, 2.0], 0.5, -1.0), abs=1e-5)
    assert (torch.sign(out.advantages) == torch.sign(grpo)).all()


def test_token_granularity_by_hand() -> None:
    # One row with the evidence on its model tokens, a masked env token in between.
    batch = CreditBatch(
        group_ids=["g", "g"], traj_ids=["a", "b"], turn_idx=[0, 0], roles=["agent"] * 2,
        returns=torch.tensor([1.0, 0.0]), invalid=torch.zeros(2, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 0, 1, 1], [1, 1, 0, 0]]),
        old_logprobs=torch.zeros(2, 4),
        teacher_logprobs=torch.tensor([[0.5, 9.0, -1.0, 2.0], [0.1, 0.2, 0.0, 0.0]]),
    )
    out = get_credit_assigner("agentopsd", granularity="token").advantages(batch)
    base = 1.0 / (2**0.5 + 1e-6)  # GRPO: scores [1, 0], std sqrt(0.5)
    got = out.advantages[0, [0, 2, 3]] / base
    # the revisions' population var is 0.0590 here, so sqrt(var + 1e-6) moves z by < 1e-5
    assert got.tolist() == pytest.approx(FACTOR_POS, abs=1e-5)
    assert got.tolist() == pytest.approx(reference_factors([0.5, -1.0, 2.0], 0.5, 1.0, token=True), abs=1e-6)
    assert out.advantages[0, 1] == 0
    neg = out.advantages[1, [0, 1]] / -base
    assert neg.tolist() == pytest.approx(reference_factors([0.1, 0.2], 0.5, -1.0, token=True), abs=1e-6)


def test_token_z_score_keeps_factors_near_one_when_the_prior_saturates() -> None:
    # compute_opsd_token_advantage: z = (q - mean) / (sqrt(var + 1e-6) + 1e-6).
    # WebShop-like returns 10 / 0: V_0 = mean(10, 0) = 5 -> clamped to 1 - 1e-4, logit 9.210240.
    # Evidence [0.5, -1, 2]: B = sigmoid([9.710240, 8.710240, 10.710240]),
    #   dB = [3.93445e-5, -1.04206e-4, 1.42547e-4], population var 1.02383e-8,
    #   sqrt(var + 1e-6) + 1e-6 = 1.006106e-3 -> z = [0.013368, -0.129311, 0.115944],
    #   factor = 0.5 + 0.5 * (1 + 0.2 z) = [1.0013368, 0.9870689, 1.0115944].
    # (With std + 1e-6 the same revisions would give z = [0.13, -1.27, 1.14]: factors [1.013, 0.9, 1.1].)
    batch = CreditBatch(
        group_ids=["g", "g"], traj_ids=["a", "b"], turn_idx=[0, 0], roles=["agent"] * 2,
        returns=torch.tensor([10.0, 0.0]), invalid=torch.zeros(2, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 1, 1], [1, 0, 0]]),
        old_logprobs=torch.zeros(2, 3), teacher_logprobs=torch.tensor([[0.5, -1.0, 2.0], [0.3, 0.0, 0.0]]),
    )
    out = get_credit_assigner("agentopsd", granularity="token").advantages(batch)
    base = 5.0 / (50**0.5 + 1e-6)  # GRPO: scores [10, 0], mean 5, std sqrt(50)
    got = (out.advantages[0] / base).tolist()
    assert got == pytest.approx([1.0013368, 0.9870689, 1.0115944], abs=1e-6)
    assert got == pytest.approx(reference_factors([0.5, -1.0, 2.0], 1 - 1e-4, 1.0, token=True), abs=1e-6)
    assert out.advantages[1, 0] / -base == pytest.approx(1.0, abs=1e-6)  # one token: z = 0


def test_prior_is_taken_after_the_invalid_penalty() -> None:
    # compute_group_mean_v0 runs on the rewards after apply_invalid_action_penalty and keeps one
    # row per trajectory, its first (turn 0): trajectory a (return 1, turn 0 invalid) counts
    # 1 - 0.1 = 0.9, b counts 0, so V_0 = 0.45, not 0.5. An invalid later turn does not move V_0.
    batch = turn_batch()
    batch.invalid[0] = True
    out = get_credit_assigner("agentopsd").advantages(batch)
    assert out.metrics["credit/agentopsd/prior_mean"] == pytest.approx(0.45)
    # by hand, prior 0.45 (logit -0.200671), evidence [0.5, -1, 2]:
    #   dB = [0.124279, -0.242615, 0.454059], z = [0.043476, -1.245900, 1.202424]
    #   factor = [1.0043476, 0.9, 1.1]
    grpo = get_credit_assigner("grpo").advantages(batch).advantages
    factor = (out.advantages[:3, 0] / grpo[:3, 0]).tolist()
    assert factor == pytest.approx([1.0043476, 0.9, 1.1], abs=1e-6)
    assert factor == pytest.approx(reference_factors([0.5, -1.0, 2.0], 0.45, 1.0), abs=1e-6)
    later = turn_batch()
    later.invalid[1] = True
    assert get_credit_assigner("agentopsd").advantages(later).metrics["credit/agentopsd/prior_mean"] == 0.5


def test_band_holds_and_sign_never_flips_on_random_batches(make_batch) -> None:
    for seed in range(20):
        gen = torch.Generator().manual_seed(seed)
        rows = [dict(group=f"g{k % 2}", traj=f"t{k}", turn=t, ret=float(torch.randint(0, 2, (1,), generator=gen)) * 10)
                for k in range(6) for t in range(1 + k % 4)]
        batch = make_batch(rows, seed=seed)
        batch.teacher_logprobs = batch.old_logprobs + 3 * torch.randn(batch.old_logprobs.shape, generator=gen)
        grpo = get_credit_assigner("grpo").advantages(batch).advantages
        for gran in ("turn", "token"):
            adv = get_credit_assigner("agentopsd", granularity=gran).advantages(batch).advantages
            nz = grpo != 0
            ratio = adv[nz] / grpo[nz]
            assert (ratio >= 0.9 - 1e-6).all() and (ratio <= 1.1 + 1e-6).all()
            assert (adv[~nz] == 0).all()


def test_prior_raw_vs_normalized() -> None:
    raw = get_credit_assigner("agentopsd").advantages(turn_batch((10.0, 0.0)))
    norm = get_credit_assigner("agentopsd", normalize_prior=True, max_return=10.0).advantages(turn_batch((10.0, 0.0)))
    # raw returns: V_0 = mean(10, 0) = 5 -> clamped to 1 - 1e-4 (saturated prior)
    assert raw.metrics["credit/agentopsd/prior_mean"] == pytest.approx(1 - 1e-4)
    assert norm.metrics["credit/agentopsd/prior_mean"] == pytest.approx(0.5)
    grpo = get_credit_assigner("grpo").advantages(turn_batch((10.0, 0.0))).advantages
    factor = (norm.advantages[:3, 0] / grpo[:3, 0]).tolist()
    assert factor == pytest.approx(FACTOR_POS, abs=1e-5)
    raw_factor = (raw.advantages[:3, 0] / grpo[:3, 0]).tolist()
    assert raw_factor == pytest.approx(reference_factors([0.5, -1.0, 2.0], 1 - 1e-4, 1.0), abs=1e-5)


def test_one_turn_episodes_reduce_to_grpo_even_with_an_informative_teacher(make_batch) -> None:
    rows = [dict(group="g", traj=f"t{k}", ret=r) for k, r in enumerate([10.0, 0.0, 10.0, 5.0])]
    batch = make_batch(rows)  # teacher != old
    assert torch.allclose(get_credit_assigner("agentopsd").advantages(batch).advantages,
                          get_credit_assigner("grpo").advantages(batch).advantages)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(granularity="sentence"), "'turn' or 'token'"),
        (dict(normalize_prior=True), "max_return"),
        (dict(band=1.0), "band must be in"),
        (dict(lambda_=2.0), "lambda_ must be in"),
    ],
)
def test_config_validation(params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        AgentOPSDCreditConfig(**params)

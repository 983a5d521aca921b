"""verl-agent GRPO and Dr. GRPO against hand-computed numbers."""

from __future__ import annotations

import pytest
import torch

from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.credit.grpo import GRPOCreditConfig


def rows_three_plus_one() -> list[dict]:
    """Group g: a 3-turn success (return 10) and a 1-turn failure (return 0)."""
    return [
        dict(group="g", traj="a", turn=0, ret=10.0),
        dict(group="g", traj="a", turn=1, ret=10.0),
        dict(group="g", traj="a", turn=2, ret=10.0),
        dict(group="g", traj="b", turn=0, ret=0.0),
    ]


def test_grpo_statistics_over_step_rows_not_trajectories(make_batch) -> None:
    # scores [10, 10, 10, 0]: mean 7.5, unbiased std sqrt((3*2.5^2 + 7.5^2)/3) = 5.
    # Over the two trajectories the mean would be 5 and the advantages +-0.707.
    out = get_credit_assigner("grpo").advantages(make_batch(rows_three_plus_one()))
    per_row = out.advantages[:, 1]
    expected = torch.tensor([2.5, 2.5, 2.5, -7.5]) / (5.0 + 1e-6)
    assert torch.allclose(per_row, expected, atol=1e-6)
    assert out.metrics["credit/grpo/score_mean"] == pytest.approx(7.5)


def test_grpo_broadcasts_over_model_tokens_only(make_batch) -> None:
    batch = make_batch(rows_three_plus_one())
    adv = get_credit_assigner("grpo").advantages(batch).advantages
    assert torch.allclose(adv[0], torch.tensor([0.0, 0.5, 0.5, 0.0, 0.5, 0.0]), atol=1e-6)
    assert (adv[:, [0, 3, 5]] == 0).all()


def test_grpo_invalid_penalty(make_batch) -> None:
    rows = rows_three_plus_one()
    rows[1]["invalid"] = True
    # scores [10, 9.9, 10, 0]
    s = torch.tensor([10.0, 9.9, 10.0, 0.0])
    expected = (s - s.mean()) / (s.std() + 1e-6)
    got = get_credit_assigner("grpo").advantages(make_batch(rows)).advantages[:, 1]
    assert torch.allclose(got, expected, atol=1e-6)
    got_search = get_credit_assigner("grpo", invalid_penalty=0.01).advantages(make_batch(rows)).advantages[:, 1]
    s2 = torch.tensor([10.0, 9.99, 10.0, 0.0])
    assert torch.allclose(got_search, (s2 - s2.mean()) / (s2.std() + 1e-6), atol=1e-6)


def test_groups_are_independent(make_batch) -> None:
    rows = rows_three_plus_one() + [dict(group="h", traj="c", ret=1.0), dict(group="h", traj="d", ret=3.0)]
    got = get_credit_assigner("grpo").advantages(make_batch(rows)).advantages[:, 1]
    # group h: mean 2, std sqrt(2)
    assert got[4].item() == pytest.approx(-1 / (2**0.5 + 1e-6), abs=1e-6)
    assert got[5].item() == pytest.approx(1 / (2**0.5 + 1e-6), abs=1e-6)


def test_dr_grpo_is_mean_only(make_batch) -> None:
    got = get_credit_assigner("dr_grpo").advantages(make_batch(rows_three_plus_one())).advantages[:, 1]
    assert torch.allclose(got, torch.tensor([2.5, 2.5, 2.5, -7.5]))


def test_singleton_group_conventions(make_batch) -> None:
    rows = [dict(group="solo", traj="x", ret=4.0)]
    raw = get_credit_assigner("grpo").advantages(make_batch(rows)).advantages[0, 1]
    zero = get_credit_assigner("grpo", singleton="zero").advantages(make_batch(rows)).advantages[0, 1]
    assert raw.item() == pytest.approx(4.0 / (1 + 1e-6))  # verl: mean 0, std 1
    assert zero.item() == 0.0


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(invalid_penalty=-0.1), "invalid_penalty"),
        (dict(eps=0.0), "eps must be > 0"),
        (dict(singleton="drop"), "'raw' or 'zero'"),
    ],
)
def test_config_validation_says_what_to_use(params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GRPOCreditConfig(**params)

"""GiGPO anchor-state grouping and gamma=0.95 discounting, by hand."""

from __future__ import annotations

import pytest
import torch

from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.credit.gigpo import GiGPOCreditConfig, discounted_step_returns


def two_trajectories() -> list[dict]:
    """Trajectory a: obs o0, o1, o2, success (10). Trajectory b: obs o0, o3, failure (0)."""
    return [
        dict(group="g", traj="a", turn=0, ret=10.0, anchor="o0"),
        dict(group="g", traj="a", turn=1, ret=10.0, anchor="o1"),
        dict(group="g", traj="a", turn=2, ret=10.0, anchor="o2"),
        dict(group="g", traj="b", turn=0, ret=0.0, anchor="o0"),
        dict(group="g", traj="b", turn=1, ret=0.0, anchor="o3"),
    ]


def test_discounted_returns_gamma_095(make_batch) -> None:
    got = discounted_step_returns(make_batch(two_trajectories()), 0.95)
    assert torch.allclose(got, torch.tensor([9.025, 9.5, 10.0, 0.0, 0.0]))


def test_discounted_returns_with_explicit_step_rewards_and_shuffled_rows(make_batch) -> None:
    rows = [dict(group="g", traj="a", turn=t, ret=3.0) for t in (2, 0, 1)]
    batch = make_batch(rows, step_rewards=torch.tensor([1.0, 0.0, 2.0]))  # r at turns 2, 0, 1
    # turn 2: 1; turn 1: 2 + 0.95; turn 0: 0 + 0.95 * 2.95
    got = discounted_step_returns(batch, 0.95)
    assert torch.allclose(got, torch.tensor([1.0, 0.95 * 2.95, 2.95]))


def test_gigpo_advantage_by_hand(make_batch) -> None:
    # episode (mean-only over the 5 step rows): scores [10,10,10,0,0], mean 6 -> [4,4,4,-6,-6]
    # step: anchor o0 = {a0: 9.025, b0: 0} -> +-4.5125; o1, o2, o3 are singletons -> 0
    out = get_credit_assigner("gigpo").advantages(make_batch(two_trajectories()))
    expected = torch.tensor([4 + 4.5125, 4.0, 4.0, -6 - 4.5125, -6.0])
    assert torch.allclose(out.advantages[:, 1], expected, atol=1e-5)
    assert out.metrics["credit/gigpo/anchor_group_size_mean"] == pytest.approx(5 / 4)


def test_anchor_groups_do_not_cross_episode_groups(make_batch) -> None:
    rows = two_trajectories() + [dict(group="h", traj="c", turn=0, ret=10.0, anchor="o0"),
                                 dict(group="h", traj="d", turn=0, ret=0.0, anchor="o0")]
    got = get_credit_assigner("gigpo").advantages(make_batch(rows)).advantages[:, 1]
    assert torch.allclose(got[:5], torch.tensor([8.5125, 4.0, 4.0, -10.5125, -6.0]), atol=1e-5)
    assert torch.allclose(got[5:], torch.tensor([10.0, -10.0]))  # (5 + 5) and (-5 - 5)


def test_invalid_penalty_hits_episode_and_step_levels(make_batch) -> None:
    rows = two_trajectories()
    rows[3]["invalid"] = True  # b0: score -0.1, step return -0.1
    got = get_credit_assigner("gigpo").advantages(make_batch(rows)).advantages[:, 1]
    ep_mean = (30 - 0.1) / 5
    step_mean = (9.025 - 0.1) / 2
    assert got[3].item() == pytest.approx((-0.1 - ep_mean) + (-0.1 - step_mean), abs=1e-5)
    assert got[0].item() == pytest.approx((10 - ep_mean) + (9.025 - step_mean), abs=1e-5)


def test_step_weight_and_std_mode(make_batch) -> None:
    got = get_credit_assigner("gigpo", step_weight=0.0).advantages(make_batch(two_trajectories())).advantages[:, 1]
    assert torch.allclose(got, torch.tensor([4.0, 4.0, 4.0, -6.0, -6.0]))


def test_mean_std_norm_by_hand(make_batch) -> None:
    # As verl-agent's episode_norm_reward / step_norm_reward (gigpo/core_gigpo.py) with
    # mode="mean_std_norm": (s - mean) / (std + 1e-6), torch.std unbiased, a singleton step group
    # has mean = its own value (advantage 0).
    # episode: scores [10,10,10,0,0], mean 6, std sqrt(120/4) = 5.4772256 -> 4/5.4772256 = 0.7302967,
    #          -6/5.4772256 = -1.0954451
    # step: anchor o0 = {9.025, 0}, mean 4.5125, std 4.5125*sqrt(2) -> +-0.7071067; o1, o2, o3: 0
    out = get_credit_assigner("gigpo", normalization="mean_std_norm").advantages(make_batch(two_trajectories()))
    expected = [0.7302967 + 0.7071067, 0.7302967, 0.7302967, -1.0954451 - 0.7071067, -1.0954451]
    assert out.advantages[:, 1].tolist() == pytest.approx(expected, abs=1e-6)
    assert get_credit_assigner("gigpo", normalization="mean_std_norm").one_turn_equivalent() == ("grpo", 2.0)
    assert get_credit_assigner("gigpo").one_turn_equivalent() == ("dr_grpo", 2.0)


def test_missing_anchor_keys_says_what_to_provide(make_batch) -> None:
    with pytest.raises(ValueError, match="anchor_keys"):
        get_credit_assigner("gigpo").advantages(make_batch(two_trajectories(), anchor_keys=None))


def test_repeated_turn_index_is_rejected(make_batch) -> None:
    rows = two_trajectories()
    rows[1]["turn"] = 0
    with pytest.raises(ValueError, match="repeated turn indices"):
        get_credit_assigner("gigpo").advantages(make_batch(rows))


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="gamma must be in"):
        GiGPOCreditConfig(gamma=1.5)
    with pytest.raises(ValueError, match="mean_std_norm for ALFWorld and Search"):
        GiGPOCreditConfig(normalization="std")
    assert GiGPOCreditConfig().normalization == "mean_norm"  # verl-agent's ppo_trainer.yaml default


def test_similar_anchor_states_share_a_group_at_the_threshold(make_batch) -> None:
    from agentgym_suite.trainers.credit.gigpo import similar_anchor_keys

    near = "you are in the kitchen. you see a mug 1."
    also = "you are in the kitchen. you see a mug 2."  # difflib ratio 0.975 with `near`
    far = "you arrive at drawer 3. it is closed."
    assert similar_anchor_keys(["g"] * 3, [near, also, far], 0.9) == [near, near, far]
    assert similar_anchor_keys(["g", "h"], [near, also], 0.9) == [near, also]  # never across groups
    rows = [dict(group="g", traj="a", turn=0, ret=10.0, anchor=near),
            dict(group="g", traj="b", turn=0, ret=0.0, anchor=also)]
    exact = get_credit_assigner("gigpo").advantages(make_batch(rows)).advantages[:, 1]
    similar = get_credit_assigner("gigpo", similarity_threshold=0.9).advantages(make_batch(rows)).advantages[:, 1]
    assert torch.allclose(exact, torch.tensor([5.0, -5.0]))  # singleton anchors: episode advantage only
    assert torch.allclose(similar, torch.tensor([10.0, -10.0]))  # one anchor group: +-5 step advantage added
    with pytest.raises(ValueError, match="similarity_threshold"):
        get_credit_assigner("gigpo", similarity_threshold=1.0)

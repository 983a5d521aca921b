"""SkillRise discounting (gamma = 0.6) and (task, position, role) grouping, by hand."""

from __future__ import annotations

import pytest
import torch

from agentgym_suite.trainers.credit import get_credit_assigner
from agentgym_suite.trainers.credit.skillrise import SkillRiseCreditConfig, skillrise_scores


def trials() -> list[dict]:
    """Two trials of K = 3 tasks. Trial 1 rewards [1, 0, 1] (task 0 took two turns);
    trial 2 rewards [0, 1, 1] and an invalid curate at position 1."""
    t1 = [("solve", 0, 1.0), ("solve", 0, 1.0), ("curate", 0, 0.0), ("solve", 1, 0.0), ("curate", 1, 0.0),
          ("solve", 2, 1.0)]
    t2 = [("solve", 0, 0.0), ("curate", 0, 0.0), ("solve", 1, 1.0), ("curate", 1, 0.0), ("solve", 2, 1.0)]
    rows = []
    for traj, spec in (("t1", t1), ("t2", t2)):
        for turn, (role, pos, ret) in enumerate(spec):
            rows.append(dict(group="g", traj=traj, turn=turn, role=role, pos=pos, ret=ret))
    rows[9]["invalid"] = True  # t2 curate at position 1
    return rows


def test_curate_credit_is_discounted_later_rewards(make_batch) -> None:
    # t1 curate@0 = 0.6*0 + 0.36*1 = 0.36, curate@1 = 0.6*1 = 0.6
    # t2 curate@0 = 0.6*1 + 0.36*1 = 0.96, curate@1 = 0.6*1 = 0.6
    got = skillrise_scores(make_batch(trials()), 0.6)
    expected = [1, 1, 0.36, 0, 0.6, 1, 0, 0.96, 1, 0.6, 1]
    assert got.tolist() == pytest.approx(expected, abs=1e-6)


def test_advantages_by_hand(make_batch) -> None:
    # (p0, solve): trial values 1 (two rows count once) and 0 -> mean 0.5 -> +-0.5
    # (p0, curate): 0.36, 0.96 -> mean 0.66 -> -0.3, +0.3
    # (p1, solve): 0, 1 -> -0.5, +0.5
    # (p1, curate): 0.6, 0.6 - 0.5 (invalid) = 0.1 -> mean 0.35 -> +0.25, -0.25
    # (p2, solve): 1, 1 -> 0
    out = get_credit_assigner("skillrise").advantages(make_batch(trials()))
    expected = [0.5, 0.5, -0.3, -0.5, 0.25, 0.0, -0.5, 0.3, 0.5, -0.25, 0.0]
    assert out.advantages[:, 1].tolist() == pytest.approx(expected, abs=1e-6)


def test_gamma_is_configurable(make_batch) -> None:
    got = skillrise_scores(make_batch(trials()), 0.5)
    assert got[2].item() == pytest.approx(0.25) and got[7].item() == pytest.approx(0.75)


def test_groups_do_not_mix(make_batch) -> None:
    rows = trials() + [dict(group="h", traj="t3", turn=0, role="solve", pos=0, ret=1.0)]
    out = get_credit_assigner("skillrise").advantages(make_batch(rows))
    assert out.advantages[11, 1].item() == 1.0  # alone in (h, 0, solve): the raw score, as released
    assert out.advantages[0, 1].item() == pytest.approx(0.5)


def test_the_baseline_counts_each_trial_by_its_first_row(make_batch) -> None:
    """An invalid later row of a trial lowers its own advantage, not the cell's baseline."""
    rows = trials()
    rows[1]["invalid"] = True  # t1's second solve row at position 0
    out = get_credit_assigner("skillrise").advantages(make_batch(rows))
    # (p0, solve) baseline: t1's first row 1 and t2's 0 -> 0.5; the invalid row scores 1 - 0.5
    assert out.advantages[:2, 1].tolist() == pytest.approx([0.5, 0.0], abs=1e-6)
    assert out.advantages[6, 1].item() == pytest.approx(-0.5)


def test_curate_loss_weight_scales_curate_rows_only(make_batch) -> None:
    plain = get_credit_assigner("skillrise").advantages(make_batch(trials())).advantages[:, 1]
    half = get_credit_assigner("skillrise", curate_loss_weight=0.5).advantages(make_batch(trials())).advantages[:, 1]
    curate = [i for i, r in enumerate(trials()) if r["role"] == "curate"]
    assert half[curate].tolist() == pytest.approx((plain[curate] * 0.5).tolist())
    solve = [i for i in range(len(plain)) if i not in curate]
    assert half[solve].tolist() == pytest.approx(plain[solve].tolist())


def test_rejects_other_roles_and_missing_positions(make_batch) -> None:
    rows = trials()
    rows[0]["role"] = "agent"
    with pytest.raises(ValueError, match="'solve' or 'curate'"):
        get_credit_assigner("skillrise").advantages(make_batch(rows))
    with pytest.raises(ValueError, match="positions"):
        get_credit_assigner("skillrise").advantages(make_batch(trials(), positions=None))


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="gamma"):
        SkillRiseCreditConfig(gamma=-0.1)
    assert SkillRiseCreditConfig().invalid_penalty == 0.5


def test_torch_dtype(make_batch) -> None:
    assert get_credit_assigner("skillrise").advantages(make_batch(trials())).advantages.dtype == torch.float32


def _alfworld_ready() -> bool:
    import importlib.util

    from agentgym_suite.core.data import has_benchmark_data

    return importlib.util.find_spec("alfworld") is not None and has_benchmark_data("alfworld", "json_2.1.1/valid_unseen")


@pytest.mark.skipif(not _alfworld_ready(), reason="ALFWorld backend or data not available")
def test_skillrise_trains_alfworld_on_the_papers_reward_scale() -> None:
    """SkillRise's ALFWorld success pays 10, so its 0.5 invalid penalty is 5 % of a success (not half of
    one, as with the env's default scale 1); the env's score stays in [0, 1]."""
    from agentgym_suite.trainers import AgentGRPOConfig
    from agentgym_suite.trainers.agent_grpo import build_credit, default_env_factory

    def config(**kw):
        return AgentGRPOConfig(output_dir="/tmp/agentgym-skillrise-scale", bf16=False, use_cpu=True, report_to="none",
                               env_id="ALFWorld-v0", max_turns=40, **kw)

    args = config(credit="skillrise", env_kwargs={"split": "valid_unseen"})
    credit = build_credit(args)
    assert credit.env_defaults("ALFWorld-v0") == {"reward_scale": 10.0} and credit.env_defaults("WebShop-v0") == {}
    trial = credit.wrap_env_factory(default_env_factory(args, credit), "ALFWorld-v0")()
    try:
        assert trial.env.unwrapped.reward_scale == 10.0
        task_id = trial.task_ids()[0]
        _, info = trial.reset(seed=0, options={"task_id": task_id})
        total = 0.0
        while info["role"] == "solve" and info["position"] == 0:
            _, reward, _, _, info = trial.step(trial.oracle()[0])
            total += reward
        assert total == 10.0 and info["position_rewards"][0] == 10.0 and info["score"] == 1.0
        assert credit.config.invalid_penalty / total == pytest.approx(0.05)
    finally:
        trial.close()
    explicit = config(credit="skillrise", env_kwargs={"split": "valid_unseen", "reward_scale": 1.0})
    env = default_env_factory(explicit, build_credit(explicit))()
    assert env.unwrapped.reward_scale == 1.0  # what the user sets wins
    env.close()
    grpo = config(credit="grpo", env_kwargs={"split": "valid_unseen"})
    env = default_env_factory(grpo, build_credit(grpo))()
    assert env.unwrapped.reward_scale == 1.0  # other methods keep the env's default
    env.close()

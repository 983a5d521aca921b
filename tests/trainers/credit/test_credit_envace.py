"""EnvACE role-wise baselines, by hand."""

from __future__ import annotations

import pytest

from agentgym_suite.trainers.credit import get_credit_assigner


def episode_rows() -> list[dict]:
    """Task T: trajectory a (score 1): caller, simulator, caller, simulator, caller;
    trajectory b (score 0): caller, simulator, simulator."""
    a = ["caller", "simulator", "caller", "simulator", "caller"]
    b = ["caller", "simulator", "simulator"]
    rows = [dict(group="T", traj="a", turn=t, role=r, ret=1.0) for t, r in enumerate(a)]
    rows += [dict(group="T", traj="b", turn=t, role=r, ret=0.0) for t, r in enumerate(b)]
    return rows


def test_role_wise_baselines_by_hand(make_batch) -> None:
    # callers: rows [1, 1, 1, 0] (not deduplicated) -> mean 0.75 -> a: +0.25, b: -0.75
    # simulators: rows [1, 1, 0, 0] -> mean 0.5 -> a: +0.5, b: -0.5
    out = get_credit_assigner("envace").advantages(make_batch(episode_rows()))
    expected = [0.25, 0.5, 0.25, 0.5, 0.25, -0.75, -0.5, -0.5]
    assert out.advantages[:, 1].tolist() == pytest.approx(expected)
    assert out.metrics["credit/envace/simulator_row_ratio"] == pytest.approx(4 / 8)


def test_task_ids_override_the_group(make_batch) -> None:
    rows = episode_rows()
    tasks = ["T1"] * 5 + ["T2"] * 3  # each trajectory alone in its task: every baseline is itself
    out = get_credit_assigner("envace").advantages(make_batch(rows, task_ids=tasks))
    assert (out.advantages == 0).all()


def test_rejects_unknown_roles(make_batch) -> None:
    rows = episode_rows()
    rows[0]["role"] = "agent"
    with pytest.raises(ValueError, match="'caller' or 'simulator'"):
        get_credit_assigner("envace").advantages(make_batch(rows))

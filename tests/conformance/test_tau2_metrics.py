"""τ²-bench conformance of the leaderboard view: our per-domain metrics against upstream's ``compute_metrics``.

``tests/conformance/tau2/metrics.json`` holds synthetic trial outcomes (reward, DB match, how the
conversation ended; 5 tasks x 4 trials) and what upstream's ``compute_metrics`` made of them
(average reward, Pass^1..Pass^4, DB-match and termination counts), written by
``regenerate_tau2.py``. The same outcomes, as episode records of ``Tau2-v0``, must give the same
numbers through :func:`agentgym_suite.envs.tau2.sweep.domain_metrics`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.tau2.sweep import leaderboard_view
from agentgym_suite.rollout.records import Trajectory, Turn

METRICS = json.loads((Path(__file__).parent / "tau2" / "metrics.json").read_text(encoding="utf-8"))


def _record(task_id: str, attempt: int, reward: float, db_match: bool | None, end: str, scorable: bool = True) -> Trajectory:
    details: dict[str, Any] = {"db_match": db_match}
    info = {"reward_breakdown": {"reward": reward, "details": details}, "termination_reason": end, "scorable": scorable}
    turn = Turn(index=0, prompt_text="", completion_text="", info=info, terminated=True)
    return Trajectory(task_id=task_id, turns=[turn], won=reward == 1.0 and scorable, score=reward, terminated=True,
                      attempt=attempt)


def _records() -> list[Trajectory]:
    return [_record(task_id, attempt, reward, db, end)
            for task_id, trials in METRICS["trials"] for attempt, (reward, db, end) in enumerate(trials)]


def test_domain_metrics_match_upstream_compute_metrics() -> None:
    view = leaderboard_view({"retail": _records()}, k=4)
    ours = view.domains["retail"]
    expected = METRICS["expected"]
    assert ours["avg_reward"] == pytest.approx(expected["avg_reward"])
    assert {str(k): v for k, v in ours["pass_hat_k"].items()} == pytest.approx(expected["pass_hat_k"])
    assert ours["db"] == expected["db"]
    assert {key: ours["termination"][key] for key in expected["termination"]} == expected["termination"]


def test_average_pass_1_is_the_mean_over_domains_and_unscored_episodes_are_named() -> None:
    records = _records()
    unscored = [_record("z", i, 0.0, None, "user_stop", scorable=False) for i in range(4)]
    view = leaderboard_view({"retail": records + unscored, "airline": records}, k=4)
    retail_pass_1 = view.domains["retail"]["pass_hat_k"][1]
    assert retail_pass_1 == pytest.approx(0.5 * 5 / 6)  # the unscored task counts as failed
    assert view.average_pass_1 == pytest.approx((retail_pass_1 + 0.5) / 2)
    assert view.domains["retail"]["unscored"] == 4
    data = view.as_dict()
    assert data["comparable_to_leaderboard"] is False
    assert any("unscored" in reason for reason in data["leaderboard_departures"])
    assert data["domains"]["airline"]["pass_hat_k"]["4"] == pytest.approx(0.2)

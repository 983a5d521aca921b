"""Per-user Avg@k / Pass@k / Pass^k for sequence benchmarks, against hand-computed values.

Definitions as upstream VitaBench 2.0 computes them (vita.metrics.agent_metrics:
_compute_subtask_pass_metrics for the subtask units, compute_metrics for the user-level runs;
success = reward == 1.0, Avg@k = mean reward over the attempts).
"""

from __future__ import annotations

import pytest

from agentgym_suite.evaluation.metrics import summarize
from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.evaluation.sequence_metrics import sequence_summary


def _episode(task: str, attempt: int, reward: float, *, scorable: bool = True) -> Trajectory:
    user = task.split("/")[0]
    info = {"sequence_id": user, "scorable": scorable, "memory": "full"}
    return _record(task, attempt, reward, info)


def _record(task: str, attempt: int, reward: float, info: dict) -> Trajectory:
    turn = Turn(index=0, prompt_text="", completion_text="a", observation="o", reward=reward, info=info)
    return Trajectory(task, attempt=attempt, turns=[turn], episode_return=reward, won=reward == 1.0, score=reward)


RECORDS = [
    *(_episode("A/0", i, r) for i, r in enumerate([1.0, 0.0, 1.0])),
    *(_episode("A/1", i, 1.0) for i in range(3)),
    *(_episode("B/0", i, 0.0) for i in range(3)),
    _episode("B/1", 0, 0.0, scorable=False),  # no verdict: left out of every number
]


def test_per_user_and_overall_numbers() -> None:
    result = sequence_summary([r for r in RECORDS if r.turns[-1].info["scorable"]], k=2)
    assert result is not None
    a, b = result["by_sequence"]["A"], result["by_sequence"]["B"]
    assert a["subtasks"] == 2 and a["episodes"] == 6
    assert a["avg@k"] == pytest.approx(5 / 6) and a["pass@k"] == pytest.approx(1.0) and a["pass^k"] == pytest.approx(2 / 3)
    assert b == {"subtasks": 1, "episodes": 3, "avg@k": 0.0, "pass@k": 0.0, "pass^k": 0.0}
    overall = result["overall"]
    assert overall["subtasks"] == 3 and overall["users"] == 2
    assert overall["avg@k"] == pytest.approx(5 / 9) and overall["pass@k"] == pytest.approx(2 / 3) and overall["pass^k"] == pytest.approx(4 / 9)
    users = result["user_level"]  # A's runs score 1, 0.5, 1; B's 0, 0, 0
    assert users["avg@k"] == pytest.approx(5 / 12) and users["pass@k"] == pytest.approx(0.5) and users["pass^k"] == pytest.approx(1 / 6)


def test_summary_reports_them_and_plain_envs_do_not() -> None:
    summary = summarize(RECORDS, k=2)
    assert set(summary["by_sequence"]) == {"A", "B"} and summary["unscorable_episodes"] == 1
    assert summary["sequence_metrics"]["overall"]["avg@k"] == pytest.approx(5 / 9)
    assert summary["labels"]["memory"] == ["full"]
    plain = [_record("t", 0, 1.0, {})]
    assert "by_sequence" not in summarize(plain, k=1) and sequence_summary(plain, 1) is None

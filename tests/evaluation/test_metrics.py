"""pass@k / pass^k estimators and the summary, against hand-computed values."""

from __future__ import annotations

import pytest

from agentgym_suite.evaluation.metrics import pass_at_k, pass_hat_k, summarize
from agentgym_suite.rollout.records import Trajectory, Turn


def _record(task: str, attempt: int, won: bool, *, valid: tuple[bool, ...] = (True,), error: str | None = None,
            tokens: int | None = None, agent_s: float = 0.0) -> Trajectory:
    turns = [Turn(i, "", "a", observation="o", action_valid=v) for i, v in enumerate(valid)]
    return Trajectory(task, turns=turns, won=won, score=1.0 if won else 0.25, error=error,
                      error_stage=None if error is None else "agent", completion_tokens=tokens, policy_s=agent_s,
                      attempt=attempt)


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        (5, 2, 2, 1 - 3 / 10, 1 / 10),  # C(3,2)=3, C(5,2)=10, C(2,2)=1
        (4, 1, 1, 0.25, 0.25),  # k=1: both are c/n
        (3, 0, 1, 0.0, 0.0),
        (3, 3, 3, 1.0, 1.0),
        (4, 2, 3, 1.0, 0.0),  # any 3 of 4 include a success; never 3 successes
        (6, 4, 3, 1 - 0 / 20, 4 / 20),  # C(2,3)=0, C(6,3)=20, C(4,3)=4
    ],
)
def test_pass_estimators_hand_computed(n: int, c: int, k: int, at: float, hat: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)


@pytest.mark.parametrize(("n", "c", "k"), [(2, 1, 3), (3, 4, 1), (3, 1, 0), (3, -1, 1)])
def test_pass_estimators_reject_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_summary_averages_over_tasks() -> None:
    # task A: 2 of 3 won; task B: 0 of 3 won; task C: only 1 attempt (skipped for k=2)
    records = [
        _record("A", 0, True, valid=(True, False)),
        _record("A", 1, True),
        _record("A", 2, False, valid=(True, True, True)),
        _record("B", 0, False),
        _record("B", 1, False, error="RuntimeError: boom", valid=()),
        _record("B", 2, False),
        _record("C", 0, True),
    ]
    summary = summarize(records, k=2)
    assert summary["episodes"] == 7
    assert summary["tasks"] == 3
    # B#1 crashed: it is no loss, so it is left out of the rates (B has 2 completed attempts)
    assert (summary["completed"], summary["crashed"], summary["won"], summary["lost"]) == (6, 1, 3, 3)
    assert summary["success_rate"] == pytest.approx(3 / 6)
    # pass@2: A = 1 - C(1,2)/C(3,2) = 1, B = 0  -> 0.5 ; pass^2: A = C(2,2)/C(3,2) = 1/3, B = 0 -> 1/6
    assert summary["pass@k"] == pytest.approx(0.5)
    assert summary["pass^k"] == pytest.approx(1 / 6)
    assert summary["pass_k_tasks"] == 2 and summary["pass_k_tasks_skipped"] == 1
    # pass@1 uses all three tasks: (2/3 + 0 + 1) / 3
    assert summary["pass_at"]["1"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert summary["invalid_action_rate"] == pytest.approx(1 / 9)  # 9 actions, 1 invalid
    assert summary["mean_turns"] == pytest.approx(9 / 6)
    assert summary["errors"] == 1 and summary["crash_kinds"] == {"agent: RuntimeError": 1}
    assert summary["tokens_per_s"] is None and summary["completion_tokens"] is None


def test_summary_tokens_per_second_when_reported() -> None:
    records = [_record("A", 0, True, tokens=100, agent_s=2.0), _record("B", 0, False, tokens=50, agent_s=1.0)]
    summary = summarize(records, k=1)
    assert summary["completion_tokens"] == 150
    assert summary["tokens_per_s"] == pytest.approx(50.0)


def test_summary_of_nothing_has_no_rates() -> None:
    summary = summarize([], k=3)
    assert summary["episodes"] == 0
    assert summary["success_rate"] is None and summary["pass@k"] is None


def _ended(task: str, attempt: int, won: bool, **info: object) -> Trajectory:
    turn = Turn(0, "", "a", observation="o", reward=float(won), info=dict(info))
    return Trajectory(task, turns=[turn], won=won, score=float(won), attempt=attempt)


def test_unscorable_episodes_are_left_out_of_the_rates_and_counted() -> None:
    records = [
        _ended("A", 0, True, scorable=True, user_simulator="llm:tiny"),
        _ended("B", 0, False, scorable=True, user_simulator="llm:tiny"),
        _ended("C", 0, False, scorable=False, user_simulator="llm:tiny", nl_judge="none"),  # no verdict: not a loss
        _ended("C", 1, False, scorable=False, user_simulator="llm:tiny", nl_judge="none"),
    ]
    summary = summarize(records, k=1)
    assert summary["episodes"] == 4 and summary["tasks"] == 3
    assert summary["success_rate"] == pytest.approx(0.5) and summary["pass@k"] == pytest.approx(0.5)
    assert summary["unscorable_episodes"] == 2 and summary["unscorable_tasks"] == 1
    assert summary["labels"] == {"nl_judge": ["none"], "user_simulator": ["llm:tiny"]}
    assert summarize(records[2:], k=1)["success_rate"] is None

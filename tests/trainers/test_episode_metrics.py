"""The training batch's episode metrics follow the one episode summary: a crash is no loss."""

from __future__ import annotations

import pickle

import pytest

from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.rollout.summary import EpisodeOutcome, summarize_outcomes
from agentgym_suite.trainers.episode_metrics import batch_record, episode_metrics_of, reward_of


def _episode(task: str, *, won: bool, turns: int = 2, error_stage: str | None = None, terminated: bool = True,
             invalid: int = 0) -> Trajectory:
    played = [Turn(index=i, prompt_text="p", completion_text="a", action_valid=i >= invalid) for i in range(turns)]
    return Trajectory(task_id=task, turns=played, won=won, score=float(won), episode_return=float(won),
                      terminated=terminated, error=None if error_stage is None else "boom", error_stage=error_stage)


def test_a_crashed_episode_is_counted_but_not_scored_as_a_loss() -> None:
    won, lost = _episode("a", won=True, turns=1), _episode("b", won=False, turns=3, invalid=1)
    crashed = _episode("c", won=False, turns=4, error_stage="step", terminated=False)
    metrics = episode_metrics_of([batch_record([won, lost, crashed], [])])
    assert metrics["episodes/count"] == 3.0
    assert metrics["episodes/crashed"] == 1.0
    assert metrics["episodes/success_rate"] == 0.5  # 1 of the 2 judged episodes; 1/3 counted the crash as a loss
    assert metrics["episodes/turns_mean"] == 2.0
    assert metrics["episodes/error_rate"] == pytest.approx(1 / 3)
    assert metrics["episodes/invalid_action_rate"] == pytest.approx(1 / 8)  # every played turn counts here


def test_the_metrics_equal_the_one_summary_over_gathered_parts() -> None:
    episodes = [_episode(str(k), won=k % 3 == 0, turns=1 + k % 4) for k in range(7)]
    episodes.append(_episode("env-ended", won=False, error_stage="env", terminated=True))  # judged: failed, not broken
    parts = [batch_record(episodes[:3], []), pickle.loads(pickle.dumps(batch_record(episodes[3:], [])))]
    metrics = episode_metrics_of(parts)
    summary = summarize_outcomes(EpisodeOutcome.of(t) for t in episodes)
    assert metrics["episodes/success_rate"] == summary["success_rate"]
    assert metrics["episodes/return_mean"] == summary["mean_reward"]
    assert metrics["episodes/turns_mean"] == summary["mean_turns"]
    assert metrics["episodes/crashed"] == 0.0 and metrics["episodes/error_rate"] == pytest.approx(1 / 8)


def test_a_batch_of_only_crashes_logs_no_success_rate() -> None:
    metrics = episode_metrics_of([batch_record([_episode("x", won=False, error_stage="generate", terminated=False)], [])])
    assert metrics["episodes/crashed"] == 1.0 and "episodes/success_rate" not in metrics
    assert episode_metrics_of([]) == {"episodes/count": 0.0}


def test_trl_reward_is_the_mean_return_of_every_episode() -> None:
    parts = [batch_record([_episode("a", won=True), _episode("b", won=False, error_stage="step", terminated=False)], [])]
    assert reward_of(parts) == 0.5 and reward_of([]) == 0.0

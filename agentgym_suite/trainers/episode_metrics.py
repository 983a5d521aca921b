"""Episode-level training metrics over every process's episodes, and the completions table.

Pure helpers of the trainer's log phase (``AgentGRPOTrainer._log_phase``), which logs through
TRL's ``_metrics`` (``report_to``). With several processes each process's episodes are
summarised into small records (:func:`batch_record`) and gathered (one collective), so the
numbers describe the whole generation batch on every process, not rank 0's share.
"""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.rollout.records import Trajectory
from agentgym_suite.rollout.summary import EpisodeOutcome, summarize_outcomes
from agentgym_suite.trainers.rows import Row


def episode_record(traj: Trajectory) -> dict[str, Any]:
    """What the metrics need of one episode (small and picklable): its outcome for the one episode
    summary, and the training-only counts."""
    return {
        "outcome": EpisodeOutcome.of(traj), "invalid": float(traj.invalid_count), "truncated": float(traj.truncated),
        "role_generations": float(sum(len(turn.role_generations) for turn in traj.turns)),
    }


def batch_record(trajectories: Sequence[Trajectory], rows: Sequence[Row]) -> dict[str, Any]:
    """One process's share of a generation batch: its episodes' records and its row counts."""
    return {"episodes": [episode_record(t) for t in trajectories], "rows": len(rows),
            "generation_rows": sum(r.generated for r in rows)}


SUMMARY_METRICS = {
    "success_rate": "episodes/success_rate", "mean_score": "episodes/score_mean",
    "mean_reward": "episodes/return_mean", "mean_turns": "episodes/turns_mean", "error_rate": "episodes/error_rate",
}
"""The metrics taken from :func:`~agentgym_suite.rollout.summary.summarize_outcomes`, by its key."""


def episode_metrics_of(parts: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Success rate, return, turns, invalid-action rate and row counts of the gathered batch records.

    Success, score, return and turns are the one episode summary's
    (:func:`~agentgym_suite.rollout.summary.summarize_outcomes`, as held-out evaluation and
    ``agentgym eval`` compute them): a crashed episode is no loss, it is counted in
    ``episodes/crashed`` and left out of those rates and means (which are not logged when no
    episode counts towards them); ``episodes/error_rate`` is the share of all episodes with an error.
    """
    episodes = [e for part in parts for e in part["episodes"]]
    if not episodes:
        return {"episodes/count": 0.0}
    n = len(episodes)
    total = lambda key: sum(e[key] for e in episodes)  # noqa: E731
    summary = summarize_outcomes(e["outcome"] for e in episodes)
    metrics = {name: float(summary[key]) for key, name in SUMMARY_METRICS.items() if summary[key] is not None}
    return {
        "episodes/count": float(n),
        "episodes/crashed": float(summary["crashed"]),
        **metrics,
        "episodes/invalid_action_rate": total("invalid") / max(sum(float(e["outcome"].turns) for e in episodes), 1.0),
        "episodes/truncated_rate": total("truncated") / n,
        "episodes/rows": float(sum(part["rows"] for part in parts)),
        "episodes/generation_rows": float(sum(part["generation_rows"] for part in parts)),
        "episodes/role_generations": total("role_generations"),
    }


def reward_of(parts: Sequence[dict[str, Any]]) -> float:
    """TRL's ``reward`` metric: the mean return of every episode of the gathered batch records,
    crashed ones included (0 when there is none)."""
    returns = [e["outcome"].episode_return for part in parts for e in part["episodes"]]
    return sum(returns) / len(returns) if returns else 0.0


def completion_records(rows: Sequence[Row], advantages: Sequence[float]) -> list[dict[str, Any]]:
    """One completions-table line per trained row: its prompt and completion text, the episode
    return and the row's advantage (the mean over its trained tokens)."""
    return [
        {"prompt": r.turns[0].prompt_text if r.turns else "",
         "completion": "".join(t.completion_text for t in r.turns) if r.turns else "",
         "return": float(r.ret), "advantage": float(a)}
        for r, a in zip(rows, advantages)
    ]


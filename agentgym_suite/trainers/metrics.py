"""Episode-level training metrics, logged through TRL's ``_metrics`` (``report_to``)."""

from __future__ import annotations

from typing import Sequence

from agentgym_suite.rollout.records import Trajectory
from agentgym_suite.trainers.rows import Row


def episode_metrics(trajectories: Sequence[Trajectory], rows: Sequence[Row]) -> dict[str, float]:
    """Success rate, return, turns, invalid-action rate and row counts of one generation batch."""
    if not trajectories:
        return {"episodes/count": 0.0}
    n = len(trajectories)
    turns = [t.num_turns for t in trajectories]
    total_turns = max(sum(turns), 1)
    return {
        "episodes/success_rate": sum(t.won for t in trajectories) / n,
        "episodes/return_mean": sum(t.episode_return for t in trajectories) / n,
        "episodes/score_mean": sum(t.score for t in trajectories) / n,
        "episodes/turns_mean": sum(turns) / n,
        "episodes/invalid_action_rate": sum(t.invalid_count for t in trajectories) / total_turns,
        "episodes/truncated_rate": sum(t.truncated for t in trajectories) / n,
        "episodes/error_rate": sum(t.error is not None for t in trajectories) / n,
        "episodes/rows": float(len(rows)),
        "episodes/simulator_rows": float(sum(r.role == "simulator" for r in rows)),
        "episodes/simulator_generations": float(
            sum(len(turn.simulator_generations) for t in trajectories for turn in t.turns)),
    }

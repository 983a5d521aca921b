"""Episode-level training metrics, logged through TRL's ``_metrics`` (``report_to``)."""

from __future__ import annotations

from typing import Sequence

from agentgym_suite.trainers.episodes import Episode
from agentgym_suite.trainers.rows import Row


def episode_metrics(episodes: Sequence[Episode], rows: Sequence[Row]) -> dict[str, float]:
    """Success rate, return, turns, invalid-action rate and row counts of one generation batch."""
    if not episodes:
        return {"episodes/count": 0.0}
    n = len(episodes)
    turns = [len(e.turns) for e in episodes]
    total_turns = max(sum(turns), 1)
    return {
        "episodes/success_rate": sum(e.won for e in episodes) / n,
        "episodes/return_mean": sum(e.ret for e in episodes) / n,
        "episodes/score_mean": sum(e.score for e in episodes) / n,
        "episodes/turns_mean": sum(turns) / n,
        "episodes/invalid_action_rate": sum(e.invalid_count for e in episodes) / total_turns,
        "episodes/truncated_rate": sum(e.truncated for e in episodes) / n,
        "episodes/error_rate": sum(e.error is not None for e in episodes) / n,
        "episodes/rows": float(len(rows)),
        "episodes/simulator_rows": float(sum(r.role == "simulator" for r in rows)),
        "episodes/simulator_generations": float(sum(len(t.simulator) for e in episodes for t in e.turns)),
    }

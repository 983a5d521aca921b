"""The one summary of a set of played episodes: how many completed, crashed and were won, the
success rate, the mean score, turns and return, and the error rate.

``agentgym eval``'s ``summary.json`` (:func:`~agentgym_suite.evaluation.metrics.summarize`) and the
trainer's held-out ``eval_*`` metrics (:mod:`~agentgym_suite.trainers.held_out_eval`) are both
:func:`summarize_outcomes` of the same :class:`EpisodeOutcome` records, so the trainer's
``eval_success_rate`` and ``agentgym eval``'s ``success_rate`` are one statistic:

* a crashed episode (:attr:`~agentgym_suite.rollout.records.Trajectory.broken`: the env, the
  policy or a server failed before the env judged it) is no loss: it is counted in ``crashed``
  and left out of every rate and mean;
* an episode the env reports as not scorable (final ``info["scorable"] is False``) carries no
  verdict: it is left out of the success rate and the mean score and counted in ``unscorable``;
* ``error_rate`` is the share of all episodes with an error, crashed or judged.

Rates and means are None when no episode counts towards them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from agentgym_suite.rollout.records import Trajectory

__all__ = ["EpisodeOutcome", "final_info", "is_scorable", "summarize_outcomes"]


def final_info(record: Trajectory) -> dict[str, Any]:
    """The recorded info of the episode's last turn (empty when it has no turns)."""
    return record.turns[-1].info if record.turns else {}


def is_scorable(record: Trajectory) -> bool:
    """False when the env reported the episode as not scorable (``info["scorable"] is False``)."""
    return final_info(record).get("scorable", True) is not False


@dataclass(frozen=True)
class EpisodeOutcome:
    """What the summary needs of one episode: small and picklable, so processes can gather them."""

    won: bool
    score: float
    episode_return: float
    turns: int
    failed: bool
    """The episode has an error (crashed, or ended on an error the env judged)."""
    broken: bool
    """The episode crashed before the env judged it."""
    scorable: bool

    @classmethod
    def of(cls, record: Trajectory) -> EpisodeOutcome:
        """The outcome of a played episode."""
        return cls(won=bool(record.won), score=float(record.score), episode_return=float(record.episode_return),
                   turns=int(record.num_turns), failed=bool(record.failed), broken=bool(record.broken),
                   scorable=is_scorable(record))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize_outcomes(outcomes: Iterable[EpisodeOutcome]) -> dict[str, Any]:
    """``episodes``, ``completed``, ``crashed``, ``unscorable``, ``won``, ``lost``, ``success_rate``,
    ``mean_score`` (completed, scorable episodes), ``mean_turns``, ``mean_reward`` (completed
    episodes), ``errors`` and ``error_rate`` (all episodes); see the module docstring."""
    every = list(outcomes)
    completed = [o for o in every if not o.broken]
    scored = [o for o in completed if o.scorable]
    won = sum(1 for o in scored if o.won)
    errors = sum(1 for o in every if o.failed)
    return {
        "episodes": len(every),
        "completed": len(completed),
        "crashed": len(every) - len(completed),
        "unscorable": len(completed) - len(scored),
        "won": won,
        "lost": len(scored) - won,
        "success_rate": _mean([float(o.won) for o in scored]),
        "mean_score": _mean([o.score for o in scored]),
        "mean_turns": _mean([float(o.turns) for o in completed]),
        "mean_reward": _mean([o.episode_return for o in completed]),
        "errors": errors,
        "error_rate": errors / len(every) if every else None,
    }

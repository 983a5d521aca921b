"""Evaluation harness: run agents on env ids, score them (success, pass@k, pass^k), keep every
episode in a resumable JSONL file, and view or plot the results.

Main entry points: :func:`evaluate` (what ``agentgym eval`` runs), :func:`summarize`,
:func:`pass_at_k`, :func:`pass_hat_k`, :class:`EpisodeRecord`, :func:`read_records`,
:func:`write_viewer` (``agentgym view``) and :func:`plot_runs` (``agentgym plot``).
"""

from __future__ import annotations

from agentgym_suite.evaluation.metrics import pass_at_k, pass_hat_k, summarize
from agentgym_suite.evaluation.plotting import plot_runs
from agentgym_suite.evaluation.records import EpisodeRecord, TurnRecord
from agentgym_suite.evaluation.runner import EvalResult, evaluate
from agentgym_suite.evaluation.store import TrajectoryStore, read_records
from agentgym_suite.evaluation.viewer import write_viewer

__all__ = [
    "EpisodeRecord",
    "EvalResult",
    "TrajectoryStore",
    "TurnRecord",
    "evaluate",
    "pass_at_k",
    "pass_hat_k",
    "plot_runs",
    "read_records",
    "summarize",
    "write_viewer",
]

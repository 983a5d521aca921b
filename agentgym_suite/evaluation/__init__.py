"""Evaluation harness: run agents on env ids, score them (success, pass@k, pass^k), keep every
episode in a resumable JSONL file, and view or plot the results.

Main entry points: :func:`evaluate` (what ``agentgym eval`` runs), :func:`summarize`,
:func:`pass_at_k`, :func:`pass_hat_k`, :func:`read_records`, :func:`write_viewer`
(``agentgym view``) and :func:`plot_runs` (``agentgym plot``). Episodes are played by the rollout
engine with the agent as its policy and kept as :class:`~agentgym_suite.rollout.records.Trajectory`
records, the suite's one record type.
"""

from __future__ import annotations

from agentgym_suite.evaluation.metrics import pass_at_k, pass_hat_k, summarize
from agentgym_suite.evaluation.plotting import plot_runs
from agentgym_suite.evaluation.runner import EvalResult, evaluate
from agentgym_suite.evaluation.store import TrajectoryStore, read_records
from agentgym_suite.evaluation.viewer import write_viewer

__all__ = [
    "EvalResult",
    "TrajectoryStore",
    "evaluate",
    "pass_at_k",
    "pass_hat_k",
    "plot_runs",
    "read_records",
    "summarize",
    "write_viewer",
]

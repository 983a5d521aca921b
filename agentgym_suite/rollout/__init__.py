"""Batched multi-turn rollouts: many envs, one backend, exact token records.

Public names: :class:`RolloutEngine` (``run_groups`` / ``run``), :class:`EpisodeSpec`,
:class:`Trajectory` / :class:`Turn` records, :class:`TrajectoryWriter`,
:func:`read_trajectories`, :func:`to_dataset`, and :class:`EpisodePrompt` (prompt state
shared with the model agent).
"""

from agentgym_suite.rollout.engine import EpisodeSpec, RolloutEngine, RolloutStats
from agentgym_suite.rollout.prompting import EpisodePrompt
from agentgym_suite.rollout.records import (
    Trajectory,
    TrajectoryWriter,
    Turn,
    iter_trajectories,
    read_trajectories,
    to_dataset,
    trajectory_rows,
    turn_rows,
    write_trajectories,
)

__all__ = [
    "EpisodePrompt",
    "EpisodeSpec",
    "RolloutEngine",
    "RolloutStats",
    "Trajectory",
    "TrajectoryWriter",
    "Turn",
    "iter_trajectories",
    "read_trajectories",
    "to_dataset",
    "trajectory_rows",
    "turn_rows",
    "write_trajectories",
]

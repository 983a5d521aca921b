"""Batched multi-turn rollouts: many envs, one policy (a generation backend or an agent), one record type.

Public names: :class:`RolloutEngine` (``run_groups`` / ``run_specs`` / ``run``), :class:`EpisodeSpec`,
the policies :class:`BackendPolicy` and :class:`AgentPolicy`, :class:`EnvPool`, the
:class:`Trajectory` / :class:`Turn` records (failure stages in :data:`ERROR_STAGES`),
:class:`TrajectoryWriter`, :func:`read_trajectories`, :func:`to_dataset`, and
:class:`EpisodePrompt` (prompt state shared with the model agent).
"""

from agentgym_suite.rollout.engine import RolloutEngine, RolloutStats
from agentgym_suite.rollout.env_pool import EnvPool
from agentgym_suite.rollout.episodes import EpisodeSpec
from agentgym_suite.rollout.policies import AgentPolicy, BackendPolicy, make_policy
from agentgym_suite.rollout.prompting import EpisodePrompt
from agentgym_suite.rollout.records import (
    ERROR_STAGES,
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
    "ERROR_STAGES",
    "AgentPolicy",
    "BackendPolicy",
    "EnvPool",
    "EpisodePrompt",
    "EpisodeSpec",
    "RolloutEngine",
    "RolloutStats",
    "Trajectory",
    "TrajectoryWriter",
    "Turn",
    "iter_trajectories",
    "make_policy",
    "read_trajectories",
    "to_dataset",
    "trajectory_rows",
    "turn_rows",
    "write_trajectories",
]

"""Env worker pools: where a rollout's envs live and how one turn's resets and steps reach them.

* :class:`InlineEnvs` — in the rolling-out process, one env after another;
* :class:`~agentgym_suite.rollout.workers.processes.ProcessWorkers` — N worker processes on this
  machine, each holding a share of the envs, all sent a turn's calls at once;
* :class:`~agentgym_suite.rollout.workers.ray_actors.RayWorkers` — Ray actors on a cluster
  (optional extra ``agentgym-suite[ray]``);
* :class:`~agentgym_suite.rollout.workers.openenv_servers.OpenEnvServers` — sessions on OpenEnv
  servers (``agentgym serve``) on any machines (``openenv://host:port,...``).

The ``env_workers`` setting picks one (:func:`parse_env_workers`, :func:`resolve_env_workers`;
unset takes the env's default from its registration entry). A worker that dies or hangs fails
only the calls it was sent (:class:`~agentgym_suite.core.process_groups.EnvWorkerDied`) and is
replaced the next time envs are made.
"""

from agentgym_suite.core.process_groups import EnvWorkerDied
from agentgym_suite.rollout.workers.base import INLINE, EnvExecutor, InlineEnvs, executor_of, reset_envs, step_envs
from agentgym_suite.rollout.workers.remote import RemoteEnv, RemoteWorkers
from agentgym_suite.rollout.workers.settings import (
    EnvWorkers,
    env_default,
    make_executor,
    parse_env_workers,
    resolve_env_workers,
)

__all__ = [
    "INLINE",
    "EnvExecutor",
    "EnvWorkerDied",
    "EnvWorkers",
    "InlineEnvs",
    "RemoteEnv",
    "RemoteWorkers",
    "env_default",
    "executor_of",
    "make_executor",
    "parse_env_workers",
    "reset_envs",
    "resolve_env_workers",
    "step_envs",
]

"""The ``env_workers`` setting (config field and ``--env-workers`` flag): which executor runs a
pool's envs, and each env's own default.

Values: ``1`` (or ``inline``) plays every env in this process; ``N >= 2`` (or ``processes:N``)
spreads them over N worker processes; ``ray`` (or ``ray:N`` for N actors) makes them Ray actors
on the cluster ``ray.init`` reaches; ``openenv://host:port[,host2:port2…]`` makes them sessions on
OpenEnv servers (``agentgym serve``, see
:mod:`~agentgym_suite.rollout.workers.openenv_servers`); unset (None, ``auto``) takes the env's default from its
registration entry (:attr:`~agentgym_suite.registration.EnvEntry.env_workers`): ALFWorld and
ScienceWorld use one process per CPU core (at most one per env) when more than one env is live,
every other env runs inline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from agentgym_suite.rollout.workers.base import EnvExecutor, InlineEnvs

KINDS = ("inline", "processes", "ray", "openenv")
HINT = ("Use 1 (inline), a number N >= 2 of worker processes, 'ray' (or 'ray:N' actors), "
        "'openenv://host:port[,host2:port2]' (sessions on `agentgym serve` servers), or leave it unset for the env's default.")
OPENENV = "openenv://"


@dataclass(frozen=True)
class EnvWorkers:
    """A parsed ``env_workers`` value.

    Attributes:
        kind: ``inline``, ``processes``, ``ray`` or ``openenv``.
        count: processes: how many; ray: how many actors (None: one per CPU of the cluster, at
            most one per env).
        servers: openenv: the servers' ``host:port``.
    """

    kind: str
    count: int | None = None
    servers: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.kind == "openenv":
            return OPENENV + ",".join(self.servers)
        if self.kind == "inline":
            return "1"
        if self.kind == "processes":
            return str(self.count)
        return "ray" if self.count is None else f"ray:{self.count}"


def parse_env_workers(value: Any) -> EnvWorkers | None:
    """Parse an ``env_workers`` value; None means "the env's default".

    Raises:
        ValueError: for anything else, saying which values work.
    """
    if isinstance(value, EnvWorkers) or value is None:
        return value
    if isinstance(value, bool):
        raise ValueError(f"env_workers={value!r} is not a setting. {HINT}")
    if str(value).strip().lower().startswith(OPENENV):
        return _parse_servers(str(value).strip())
    text = str(value).strip().lower()
    if text in ("", "auto", "default", "none"):
        return None
    if text == "inline":
        return EnvWorkers("inline")
    kind, _, count = text.partition(":")
    if kind in ("ray", "processes") and count:
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"env_workers={value!r}: the count after ':' must be a whole number >= 1. {HINT}")
        return EnvWorkers(kind, int(count)) if kind == "ray" or int(count) > 1 else EnvWorkers("inline")
    if text == "ray":
        return EnvWorkers("ray")
    if text.lstrip("-").isdigit():
        n = int(text)
        if n < 1:
            raise ValueError(f"env_workers={value!r} must be >= 1. {HINT}")
        return EnvWorkers("inline") if n == 1 else EnvWorkers("processes", n)
    raise ValueError(f"env_workers={value!r} is not a setting. {HINT}")


def _parse_servers(value: str) -> EnvWorkers:
    servers = []
    for item in value[len(OPENENV):].split(","):
        address = item.strip()
        address = address[len(OPENENV):] if address.lower().startswith(OPENENV) else address
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in address:
            raise ValueError(f"env_workers={value!r}: {item.strip()!r} is not host:port. {HINT}")
        servers.append(address)
    return EnvWorkers("openenv", servers=tuple(servers))


def cpu_count() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def env_default(env_id: str, live_envs: int) -> EnvWorkers:
    """The default of ``env_id`` for ``live_envs`` envs played at once (inline for ids outside the suite)."""
    from agentgym_suite.registration import all_entries

    default = next((e.env_workers for e in all_entries() if e.id == env_id), "inline")
    if default == "processes" and live_envs > 1:
        count = min(cpu_count(), live_envs)
        return EnvWorkers("processes", count) if count > 1 else EnvWorkers("inline")
    return EnvWorkers("inline")


def resolve_env_workers(value: Any, env_id: str, live_envs: int) -> EnvWorkers:
    """``value`` parsed, or the env's default when unset."""
    return parse_env_workers(value) or env_default(env_id, live_envs)


def make_executor(workers: EnvWorkers, step_timeout: float | None = None) -> EnvExecutor:
    """The executor for ``workers``."""
    if workers.kind == "inline":
        return InlineEnvs(step_timeout)
    if workers.kind == "processes":
        from agentgym_suite.rollout.workers.processes import ProcessWorkers

        return ProcessWorkers(int(workers.count or cpu_count()), step_timeout)
    if workers.kind == "ray":
        from agentgym_suite.rollout.workers.ray_actors import RayWorkers

        return RayWorkers(workers.count, step_timeout)
    if workers.kind == "openenv":
        from agentgym_suite.rollout.workers.openenv_servers import OpenEnvServers

        return OpenEnvServers(workers.servers, step_timeout)
    raise ValueError(f"unknown env worker kind {workers.kind!r}; choose one of {KINDS}.")

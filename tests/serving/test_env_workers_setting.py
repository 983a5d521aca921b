"""The ``openenv://`` value of ``env_workers``: parsed, kept canonical, and refused when malformed."""

from __future__ import annotations

import pytest

from agentgym_suite.rollout.workers import EnvWorkers, make_executor, parse_env_workers
from agentgym_suite.rollout.workers.openenv_servers import OpenEnvServers


def test_openenv_servers_parse_and_round_trip() -> None:
    workers = parse_env_workers("openenv://10.0.0.5:8000, openenv://gpu-box:9001")
    assert workers == EnvWorkers("openenv", servers=("10.0.0.5:8000", "gpu-box:9001"))
    assert parse_env_workers(str(workers)) == workers
    executor = make_executor(workers, step_timeout=30)
    assert isinstance(executor, OpenEnvServers) and executor.servers == ["ws://10.0.0.5:8000", "ws://gpu-box:9001"]
    assert executor.message_timeout == 40  # the step timeout plus the workers' answer grace
    executor.close()


@pytest.mark.parametrize("value", ["openenv://", "openenv://host", "openenv://host:0", "openenv://h:8000/ws", "openenv://:80"])
def test_malformed_servers_say_what_works(value: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        parse_env_workers(value)

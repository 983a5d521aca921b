"""A server killed mid-episode: the client gets a clear error within seconds, and a pool spread
over several servers (``env_workers: openenv://…``) loses only that server's episodes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.core.process_groups import EnvWorkerDied
from agentgym_suite.rollout import EnvPool
from agentgym_suite.rollout.workers import parse_env_workers
from agentgym_suite.serving.wire import ServerGone
from serving.conftest import ServerProcess, free_port


def test_killed_server_gives_a_clear_error_within_seconds(serve_cache: Path) -> None:
    server = ServerProcess("SyntheticTools-v0", {}, cache=serve_cache)
    env = gym.make("Remote-v0", url=server.url)
    try:
        env.reset(seed=0)
        server.kill()
        started = time.monotonic()
        with pytest.raises(ServerGone, match="closed the connection during step"):
            env.step("<tool_call>{\"name\": \"noop\", \"arguments\": {}}</tool_call>")
        assert time.monotonic() - started < 5
        with pytest.raises(ServerGone, match="cannot open a session"):
            env.reset(seed=0)
    finally:
        env.close()
        server.stop()


def test_unreachable_server_fails_at_make() -> None:
    with pytest.raises(ServerGone, match="cannot be reached"):
        gym.make("Remote-v0", url=f"ws://127.0.0.1:{free_port()}")


def test_pool_over_two_servers_loses_only_the_killed_servers_episodes(serve_cache: Path,
                                                                      tools_server: ServerProcess) -> None:
    first, second = ServerProcess("SyntheticTools-v0", {}, cache=serve_cache), tools_server
    workers = f"openenv://127.0.0.1:{first.port},127.0.0.1:{second.port}"
    pool = EnvPool(workers=workers)
    try:
        assert parse_env_workers(workers).servers == (f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}")
        envs = pool.get("SyntheticTools-v0", 4)
        assert sorted(e.server for e in envs).count(f"ws://127.0.0.1:{first.port}") == 2
        executor = pool.executor
        results = executor.reset([(env, seed, None, False) for seed, env in enumerate(envs)])
        assert not [r for r in results if isinstance(r, BaseException)]
        local = gym.make("SyntheticTools-v0")
        for seed, (obs, _info, _) in enumerate(results):
            assert obs == local.reset(seed=seed)[0]
        local.close()
        first.kill()
        results = executor.step([(env, "Done.", False) for env in envs])
        lost = [env.server for env, r in zip(envs, results) if isinstance(r, EnvWorkerDied)]
        kept = [r for r in results if not isinstance(r, BaseException)]
        assert lost == [f"ws://127.0.0.1:{first.port}"] * 2 and len(kept) == 2
        again = pool.get("SyntheticTools-v0", 4)  # the lost sessions are made again on the server that answers
        assert {e.server for e in again} == {f"ws://127.0.0.1:{second.port}"}
        assert all(not isinstance(r, BaseException) for r in executor.reset([(e, 1, None, False) for e in again]))
    finally:
        pool.close()
        first.stop()


def test_pool_refuses_a_server_of_another_env(tools_server: ServerProcess) -> None:
    pool = EnvPool(workers=f"openenv://127.0.0.1:{tools_server.port}")
    try:
        with pytest.raises(ValueError, match="agentgym serve TextWorld-v0"):
            pool.get("TextWorld-v0", 1)
    finally:
        pool.close()


class KillingAgent:
    """Sends a tool call that changes nothing (episodes go on) and kills ``victim`` after two turns."""

    name = "killer"

    def __init__(self, victim: ServerProcess | None) -> None:
        self.victim = victim
        self.turns = 0

    def reset_batch(self, envs: Any, *, seed: int | None = None) -> None:
        self.turns = 0

    def act_batch(self, observations: Any, infos: Any) -> list[str]:
        self.turns += 1
        if self.turns == 3 and self.victim is not None:
            self.victim.kill()
        return ['<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>'] * len(observations)

    def keep_slots(self, keep: Any) -> None:
        pass


def test_rollout_engine_loses_only_the_killed_servers_episodes(serve_cache: Path, tools_server: ServerProcess) -> None:
    """The trainer's and eval's engine: a server killed mid-rollout ends its episodes with the
    dead-worker error; the other server's episodes finish; the next rollout runs on the survivor."""
    from agentgym_suite.rollout import EpisodeSpec, RolloutEngine

    victim = ServerProcess("SyntheticTools-v0", {}, cache=serve_cache)
    engine = RolloutEngine(KillingAgent(victim), max_turns=5,
                           env_workers=f"openenv://127.0.0.1:{victim.port},127.0.0.1:{tools_server.port}")
    try:
        specs = [EpisodeSpec(None, seed, f"g{seed}", str(seed)) for seed in range(4)]
        first = engine.run_specs("SyntheticTools-v0", specs)
        assert len(first) == 4
        broken = [t for t in first if t.error]
        assert len(broken) == 2, [t.error for t in first]
        assert all(t.error.startswith(f"ServerGone: the env server at ws://127.0.0.1:{victim.port}") for t in broken)
        assert all(len(t.turns) == 5 for t in first if not t.error)
        engine.policy.agent.victim = None
        second = engine.run_specs("SyntheticTools-v0", specs)
        assert len(second) == 4 and not any(t.error for t in second)
    finally:
        engine.close()
        victim.stop()

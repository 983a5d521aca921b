"""Envs as Ray actors on a local ``ray.init(num_cpus=2)``: the same trajectories as inline, for the
rollout engine and the trainer, and an actor killed mid-rollout.

These run in the default suite (``make test`` installs the ``ray`` extra): Ray's own start takes
the fixture some seconds, each test's actors a few more. The workers find the test fakes through
``PYTHONPATH`` set before ``ray.init`` (inherited by the local Ray's prestarted workers; a
``runtime_env`` would make Ray start fresh workers for every actor, tens of seconds on 2 cores).
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from agentgym_suite.rollout import RolloutEngine  # noqa: E402
from agentgym_suite.rollout.workers.ray_actors import RayWorkers  # noqa: E402

from .test_env_workers import FAULT_ID, GoAgent, _records, _specs  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """A local two-CPU Ray instance whose workers import the test fakes too."""
    patch = pytest.MonkeyPatch()
    patch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(TESTS), str(TESTS.parent),
                                                           os.environ.get("PYTHONPATH", "")] if p))
    patch.setenv("RAY_AUTH_MODE", "disabled")  # a local test instance: no token to set up
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    patch.undo()


class EchoAgent:
    """A batched agent whose every action depends on the episode's seed and everything its env said
    so far: any difference in what the envs return changes the rest of the trajectory."""

    name = "echo"

    def reset_batch(self, envs: Sequence[Any], *, seeds: Sequence[int | None]) -> None:
        self.keys = [str(seed) for seed in seeds]

    def act_batch(self, observations: Sequence[Any], infos: Sequence[dict]) -> list[str]:
        actions = []
        for i, (observation, info) in enumerate(zip(observations, infos)):
            self.keys[i] = hashlib.sha256(f"{self.keys[i]}|{observation}|{info.get('admissible_actions')}".encode()).hexdigest()
            choices = [a for a in info.get("admissible_actions") or ["go"] if a != "sleep"]  # sleep: a hung step
            actions.append(choices[int(self.keys[i], 16) % len(choices)])
        return actions

    def keep_slots(self, keep: Sequence[int]) -> None:
        self.keys = [self.keys[i] for i in keep]


def test_ray_actors_play_the_same_trajectories_as_inline() -> None:
    runs = {}
    for workers in (1, "ray"):
        engine = RolloutEngine(EchoAgent(), max_turns=5, info_keys=None, env_workers=workers, record_oracle=True)
        try:
            runs[workers] = engine.run_groups(FAULT_ID, ["t1-0", "t2-1", "t3-2"], group_size=2, seed=3)
            if workers == "ray":
                assert engine.env_pool.describe() == "2 Ray actors"
        finally:
            engine.close()
    assert _records(runs["ray"]) == _records(runs[1])
    assert any(t.won for t in runs[1]) and any(turn.oracle for t in runs[1] for turn in t.turns)


def test_a_killed_actor_ends_only_its_own_episodes(tmp_path: Path) -> None:
    import psutil

    kwargs = {"home_pid": os.getpid(), "kill_task": "t3-2", "once": str(tmp_path / "killed")}
    engine = RolloutEngine(GoAgent(), max_turns=6, env_workers="ray")
    tasks = ["t1-0", "t2-1", "t3-2", "t3-5", "t2-4", "t1-3"]
    first = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
    executor = engine.env_pool.executor
    assert isinstance(executor, RayWorkers)
    broken = [t for t in first if t.error]
    assert {t.task_id for t in broken} == {"t3-2", "t2-4"}  # actor 0's live episodes
    assert all(t.error_stage == "step" and "env worker 0" in t.error and "died" in t.error for t in broken)
    assert all(t.won for t in first if not t.error)
    second = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
    assert all(t.won and t.error is None for t in second)
    pids = [w.pid for w in executor.workers]
    started = time.monotonic()
    engine.close()
    assert time.monotonic() - started < 10
    _, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "env actors outlived close()"


@pytest.mark.slow
def test_the_trainer_gets_the_same_trajectories_from_ray_actors(tmp_path: Path) -> None:
    """Slow (it trains the tiny model twice, a minute on 2 cores): the trainer's rollouts go through
    the same pool and executor as the engine's (tested above), and the default suite trains through
    worker processes (``trainers/test_env_workers.py``)."""
    from agentgym_suite.trainers import AgentGRPOTrainer
    from trainers.conftest import tiny_config
    from trainers.fake_env import make_letter_env
    from trainers.test_env_workers import _episodes

    runs = {}
    for workers in ("1", "ray"):
        out = tmp_path / workers
        trainer = AgentGRPOTrainer(args=tiny_config(str(out), env_workers=workers, max_steps=1),
                                   env_factory=functools.partial(make_letter_env, horizon=2))
        trainer.train()
        runs[workers] = _episodes(out, 1)
    assert runs["1"] and runs["ray"] == runs["1"]


def test_ray_actors_take_the_model_cache_settings_of_the_run(tmp_path: Path) -> None:
    """The local Ray was started before the run set its cache and ledger (as a second evaluation in one
    process finds it): the actors get them from the pool, not from the raylet's environment."""
    from agentgym_suite.llm.role_client import ModelCallSettings, call_environment, model_calls
    from agentgym_suite.rollout.env_pool import EnvPool

    settings = ModelCallSettings(cache_dir=tmp_path / "cache", ledger=tmp_path / "ledger.sqlite", replay_only=("user",))
    with model_calls(settings):
        pool = EnvPool(workers="ray:1")
        try:
            env = pool.get(FAULT_ID, 1, {})[0]
            seen = env.unwrapped.role_call_settings()
        finally:
            pool.close()
        assert seen == call_environment()
    assert seen["AGENTGYM_MODEL_CACHE"] == str(tmp_path / "cache") and seen["AGENTGYM_MODEL_REPLAY_ONLY"] == "user"


def test_an_actor_on_another_machine_plays_its_roles_without_the_runs_files(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    """SQLite's locks do not hold across machines: an actor elsewhere gets no cache and no ledger (the
    pool warns), never paths that name another machine's files."""
    from agentgym_suite.llm.role_client import CACHE_ENV, LEDGER_ENV, call_environment
    from agentgym_suite.rollout.workers.ray_actors import EnvHostActor

    run = {CACHE_ENV: str(tmp_path / "cache"), LEDGER_ENV: str(tmp_path / "ledger.sqlite")}
    for name in run:
        monkeypatch.setenv(name, "stale")
    EnvHostActor(None, run, host="another-machine")  # the body of an actor, built here
    assert call_environment()[CACHE_ENV] == "" and call_environment()[LEDGER_ENV] == ""
    EnvHostActor(None, run, host=socket.gethostname())
    assert call_environment()[CACHE_ENV] == run[CACHE_ENV] and call_environment()[LEDGER_ENV] == run[LEDGER_ENV]

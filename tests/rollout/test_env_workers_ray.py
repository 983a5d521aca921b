"""Envs as Ray actors on a local ``ray.init(num_cpus=2)``: the same trajectories as inline, for the
rollout engine and the trainer, and an actor killed mid-rollout."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from agentgym_suite.llm import SamplingParams, load_backend  # noqa: E402
from agentgym_suite.rollout import RolloutEngine  # noqa: E402
from agentgym_suite.rollout.workers.ray_actors import RayWorkers  # noqa: E402

from .test_env_workers import FAULT_ID, GoAgent, _records, _specs  # noqa: E402

pytestmark = pytest.mark.slow
TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """A local two-CPU Ray instance whose workers import the test fakes too."""
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", ""), str(TESTS.parent)])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def test_ray_actors_play_the_same_trajectories_as_inline() -> None:
    tiny = load_backend("tiny", device="cpu")
    runs = {}
    for workers in (1, "ray"):
        engine = RolloutEngine(tiny, mode="chat", sampling=SamplingParams(temperature=1.0, max_new_tokens=6, seed=5),
                               max_turns=4, env_workers=workers, record_oracle=True)
        try:
            runs[workers] = engine.run_groups(FAULT_ID, ["t1-0", "t2-1", "t3-2"], group_size=2, seed=3)
            if workers == "ray":
                assert engine.env_pool.describe() == "2 Ray actors"
        finally:
            engine.close()
    assert _records(runs["ray"]) == _records(runs[1])


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


def test_the_trainer_gets_the_same_trajectories_from_ray_actors(tmp_path: Path) -> None:
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

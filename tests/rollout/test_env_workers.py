"""Env worker pools: the ``env_workers`` setting, the same trajectories inline and in worker
processes, and workers that die or hang mid-rollout."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import pytest

from agentgym_suite.core.process_groups import EnvWorkerDied
from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.registration import entry
from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.workers import EnvWorkers, RemoteEnv, env_default, parse_env_workers, resolve_env_workers
from agentgym_suite.rollout.workers.processes import ProcessWorkers

from .fakes import CounterEnv
from .worker_fakes import live_descendants, register_worker_fakes

FAULT_ID = register_worker_fakes()
COUNTER_ID = "WorkersCounter-v0"
if COUNTER_ID not in gym.registry:
    gym.register(COUNTER_ID, entry_point=CounterEnv, max_episode_steps=6)
SAMPLING = SamplingParams(temperature=1.0, max_new_tokens=6, seed=11)
TIMING = ("wall_s", "policy_s")


class GoAgent:
    """A batched agent that says ``go`` in every env."""

    name = "go"

    def reset_batch(self, envs: Sequence[Any], *, seed: int | None = None) -> None:
        self.slots = len(envs)

    def act_batch(self, observations: Sequence[Any], infos: Sequence[dict]) -> list[str]:
        return ["go"] * len(observations)

    def keep_slots(self, keep: Sequence[int]) -> None:
        self.slots = len(keep)


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


def _records(trajectories: list) -> list[dict]:
    return [{k: v for k, v in t.to_dict().items() if k not in TIMING} for t in trajectories]


def _specs(task_ids: Sequence[str]) -> list[EpisodeSpec]:
    return [EpisodeSpec(t, 20 + i, f"g{i}", f"{i}") for i, t in enumerate(task_ids)]


def _close_within_seconds(engine: RolloutEngine, limit_s: float = 10.0) -> None:
    started = time.monotonic()
    engine.close()
    assert time.monotonic() - started < limit_s


# ---------------------------------------------------------------------------- the setting
@pytest.mark.parametrize("value, expected", [
    (None, None), ("", None), ("auto", None), (1, EnvWorkers("inline")), ("1", EnvWorkers("inline")),
    ("inline", EnvWorkers("inline")), (4, EnvWorkers("processes", 4)), (" 2 ", EnvWorkers("processes", 2)),
    ("processes:3", EnvWorkers("processes", 3)), ("ray", EnvWorkers("ray")), ("RAY:5", EnvWorkers("ray", 5)),
])
def test_env_workers_values(value: Any, expected: EnvWorkers | None) -> None:
    assert parse_env_workers(value) == expected
    if expected is not None:
        assert parse_env_workers(str(expected)) == expected  # the canonical text round-trips


@pytest.mark.parametrize("value", [0, -2, "0", "many", "ray:0", "processes:x", True, 2.5])
def test_bad_env_workers_values_say_what_works(value: Any) -> None:
    with pytest.raises(ValueError, match="N >= 2"):
        parse_env_workers(value)


def test_env_defaults_come_from_the_registration_entry() -> None:
    assert entry("ALFWorld-v0").env_workers == entry("ScienceWorld-v0").env_workers == "processes"
    assert entry("TextWorld-v0").env_workers == "inline"
    assert env_default("ALFWorld-v0", 1) == EnvWorkers("inline")  # one live env: nothing to overlap
    many = env_default("ScienceWorld-v0", 16)
    assert many.kind == "processes" and 2 <= (many.count or 0) <= 16 or os.cpu_count() == 1
    assert env_default("TextWorld-v0", 16) == EnvWorkers("inline")
    assert env_default(COUNTER_ID, 16) == EnvWorkers("inline")  # ids outside the suite run inline
    assert resolve_env_workers("ray", "TextWorld-v0", 1) == EnvWorkers("ray")


# ---------------------------------------------------------------------------- same trajectories
def test_worker_processes_play_the_same_trajectories_as_inline(tiny) -> None:
    """The tiny model samples every action (seeded), so any difference in what the envs return
    changes the text that follows; records must be equal field for field (timings aside)."""
    tasks = ["c1", "c2", "c3", "boom"]
    runs = {}
    for workers in (1, 2):
        engine = RolloutEngine(tiny, mode="chat", sampling=SAMPLING, max_turns=4, env_workers=workers,
                               record_oracle=True)
        try:
            runs[workers] = engine.run_groups(COUNTER_ID, tasks, group_size=2, seed=5)
            assert engine.env_pool.describe() == ("inline" if workers == 1 else "2 worker processes")
        finally:
            engine.close()
    assert _records(runs[2]) == _records(runs[1])
    boom = [t for t in runs[2] if t.error_stage == "step"]
    assert boom and all(t.error.startswith("RuntimeError: the simulator crashed") for t in boom)
    assert any(turn.oracle == ["next"] for t in runs[2] for turn in t.turns)  # oracles came back with the steps


def test_a_remote_env_answers_attributes_and_methods() -> None:
    pool = EnvPool(workers=2)
    try:
        env = pool.get(FAULT_ID, 1, {"n_tasks": 3})[0]
        assert isinstance(env, RemoteEnv) and env.spec.id == FAULT_ID and env.spec.max_episode_steps == 8
        assert type(env.unwrapped).__name__ == "WorkerFaultEnv"
        assert env.unwrapped.task_ids() == ["t1-0", "t2-1", "t3-2"]
        assert env.unwrapped.prompt_description == "a counting game"
        observation, info = env.reset(seed=0, options={"task_id": "t2-1"})
        assert "Say go 2 times" in observation and env.unwrapped.oracle() == ["go", "go"]
        assert env.step("go")[1] == 0.0 and env.step("go")[2] is True
        with pytest.raises(AttributeError):
            _ = env.unwrapped.no_such_attribute
    finally:
        pool.close()


# ---------------------------------------------------------------------------- faults
def test_a_killed_worker_ends_only_its_own_episodes_and_is_replaced(tmp_path: Path) -> None:
    before = live_descendants()
    kwargs = {"home_pid": os.getpid(), "kill_task": "t3-2", "once": str(tmp_path / "killed")}
    engine = RolloutEngine(GoAgent(), max_turns=6, env_workers=2)
    tasks = ["t1-0", "t2-1", "t3-2", "t3-5", "t2-4", "t1-3"]
    first = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
    assert [t.task_id for t in first] == tasks  # nothing lost, nothing duplicated
    executor = engine.env_pool.executor
    assert isinstance(executor, ProcessWorkers)
    broken = [t for t in first if t.error]
    # envs alternate between the two workers: worker 0 holds episodes 0, 2, 4; t3-2 killed it on its
    # second step, while t1-0 had already won and t2-4 was still running
    assert {t.task_id for t in broken} == {"t3-2", "t2-4"}
    for t in broken:
        assert t.broken and t.error_stage == "step" and not t.won
        assert t.error.startswith("EnvWorkerDied: env worker 0 (pid ") and "was killed by SIGKILL during step" in t.error
    assert all(t.won and t.error is None for t in first if t not in broken)

    second = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)  # a fresh worker 0
    assert all(t.won and t.error is None for t in second)
    assert executor.workers[0].generation == 2 and executor.workers[1].generation == 1

    workers = live_descendants() - before
    assert len(workers) == 2
    started = time.monotonic()
    engine.close()
    assert time.monotonic() - started < 10
    assert not (live_descendants() - before), "worker processes were left behind"


def test_a_worker_that_died_between_runs_is_replaced_before_the_next(tmp_path: Path) -> None:
    engine = RolloutEngine(GoAgent(), max_turns=6, env_workers=2)
    try:
        tasks = ["t1-0", "t2-1", "t3-2", "t1-3"]
        assert all(t.won for t in engine.run_specs(FAULT_ID, _specs(tasks)))
        executor = engine.env_pool.executor
        victim = executor.workers[1].pid
        os.kill(victim, 9)
        executor.workers[1].handle[0].join(5)  # dead before the next run starts
        again = engine.run_specs(FAULT_ID, _specs(tasks))
        assert all(t.won and t.error is None for t in again)  # no episode was lost to the dead worker
        assert executor.workers[1].generation == 2 and executor.workers[1].pid != victim
    finally:
        engine.close()


def test_a_hung_worker_is_killed_after_the_step_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.rollout.workers import remote

    monkeypatch.setattr(remote, "ANSWER_GRACE_S", 1.0)
    before = live_descendants()
    kwargs = {"home_pid": os.getpid(), "stop_task": "t2-1", "once": str(tmp_path / "stopped")}
    pool = EnvPool(step_timeout=0.5, workers=2)
    engine = RolloutEngine(GoAgent(), max_turns=6, env_pool=pool)
    try:
        tasks = ["t3-2", "t2-1", "t3-5", "t1-3"]
        trajectories = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
        hung = [t for t in trajectories if t.error]
        assert [t.task_id for t in hung] == ["t2-1"]  # worker 1's other episode (t1-3) had already won
        assert "env worker 1" in hung[0].error and "did not answer within" in hung[0].error
        assert all(t.won for t in trajectories if t.task_id != "t2-1")
        again = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
        assert all(t.won for t in again)
    finally:
        _close_within_seconds(engine)
    assert not (live_descendants() - before)


def test_a_worker_that_hangs_in_a_reset_is_killed_after_the_reset_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.rollout.workers import remote

    monkeypatch.setattr(remote, "ANSWER_GRACE_S", 1.0)
    monkeypatch.setattr(remote, "RESET_TIMEOUT_MIN_S", 0.5)
    before = live_descendants()
    kwargs = {"home_pid": os.getpid(), "stop_reset_task": "t2-1", "once": str(tmp_path / "stopped")}
    engine = RolloutEngine(GoAgent(), max_turns=6, env_pool=EnvPool(step_timeout=0.5, workers=2))
    try:
        tasks = ["t3-2", "t2-1", "t3-5", "t1-3"]
        trajectories = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)
        assert [t.task_id for t in trajectories] == tasks  # nothing lost, nothing duplicated
        hung = {t.task_id for t in trajectories if t.error}
        # worker 1 holds episodes 1 and 3 and loads them in order: it hangs on t2-1, so t1-3 is lost with it
        assert hung == {"t2-1", "t1-3"}
        for t in trajectories:
            if t.task_id in hung:
                assert t.broken and t.error_stage == "reset" and "did not answer within" in t.error
            else:
                assert t.won and t.error is None
        again = engine.run_specs(FAULT_ID, _specs(tasks), env_kwargs=kwargs)  # a fresh worker 1
        assert all(t.won for t in again)
    finally:
        _close_within_seconds(engine)
    assert not (live_descendants() - before)


def test_calls_on_envs_of_a_dead_worker_fail_with_the_reason() -> None:
    pool = EnvPool(workers=2)
    try:
        envs = pool.get(FAULT_ID, 2)
        executor = pool.executor
        assert isinstance(executor, ProcessWorkers)
        os.kill(executor.workers[1].pid, 9)
        results = executor.reset([(env, 0, None, False) for env in envs])
        assert isinstance(results[0], tuple)
        assert isinstance(results[1], EnvWorkerDied) and "env worker 1" in str(results[1])
        assert not executor.usable(envs[1]) and executor.usable(envs[0])
        with pytest.raises(EnvWorkerDied, match="was killed by SIGKILL"):
            envs[1].step("go")
        fresh = pool.get(FAULT_ID, 2)
        assert fresh[0] is envs[0] and fresh[1] is not envs[1] and executor.usable(fresh[1])
    finally:
        pool.close()


def test_a_worker_that_dies_while_making_envs_is_replaced_once(tmp_path: Path) -> None:
    import functools

    from .worker_fakes import make_or_die

    pool = EnvPool(workers=2)
    try:
        envs = pool.get_made(functools.partial(make_or_die, str(tmp_path / "died"), os.getpid()), 4, env_id=FAULT_ID)
        assert len(envs) == 4 and all(pool.executor.usable(env) for env in envs)
        assert (tmp_path / "died").exists() and max(w.generation for w in pool.executor.workers) == 2
    finally:
        pool.close()


def test_making_an_env_that_fails_raises_its_error() -> None:
    pool = EnvPool(workers=2)
    try:
        with pytest.raises(TypeError, match="unexpected keyword"):
            pool.get(FAULT_ID, 2, {"no_such_setting": 1})
        assert len(pool.get(FAULT_ID, 2)) == 2  # the pool still works
    finally:
        pool.close()


def test_a_worker_whose_pool_went_away_mid_call_exits_cleanly() -> None:
    # the pool's process closed its end while the worker was busy: the answer cannot be sent, and the worker
    # exits with code 0 instead of dying on a BrokenPipeError traceback
    import functools
    import multiprocessing

    import cloudpickle

    from agentgym_suite.rollout.workers.processes import serve

    from .worker_fakes import WorkerFaultEnv

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    worker = ctx.Process(target=serve, args=(child, None), daemon=True)
    worker.start()
    child.close()
    try:
        factory = cloudpickle.dumps(functools.partial(WorkerFaultEnv, sleep_s=2.0))
        parent.send_bytes(cloudpickle.dumps(("make", [(1, factory)])))
        assert cloudpickle.loads(parent.recv_bytes())[0][0]
        parent.send_bytes(cloudpickle.dumps(("reset", [(1, 0, {"task_id": "t1-0"}, False)])))
        assert cloudpickle.loads(parent.recv_bytes())[0][0]
        parent.send_bytes(cloudpickle.dumps(("step", [(1, "sleep", False)])))
        parent.close()
        worker.join(30)
        assert worker.exitcode == 0
    finally:
        if worker.is_alive():
            worker.kill()

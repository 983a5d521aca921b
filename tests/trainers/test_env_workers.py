"""The trainer's ``env_workers``: validated in the config, the same trajectories inline and in
worker processes, and a worker SIGKILLed mid-rollout."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.trajectory_log import read_step
from rollout.worker_fakes import WorkerFaultEnv, live_descendants
from trainers.conftest import tiny_config
from trainers.fake_env import make_letter_env

TIMING = ("wall_s", "policy_s")


def _episodes(run: Path, step: int) -> list[dict]:
    rows = read_step(run / "trajectories" / f"step_{step:06d}.jsonl")
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


@pytest.mark.parametrize("value, canonical", [(None, None), (1, "1"), ("3", "3"), ("ray", "ray"), ("inline", "1")])
def test_config_keeps_env_workers_canonical(tmp_path: Path, value, canonical) -> None:
    assert tiny_config(str(tmp_path), env_workers=value).env_workers == canonical


def test_config_rejects_bad_env_workers(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="N >= 2"):
        tiny_config(str(tmp_path), env_workers="0")
    with pytest.raises(ValueError, match="borrows the policy being trained"):
        tiny_config(str(tmp_path), env_workers=2, env_mode="rehearsal", env_id="SyntheticTools-v0")
    # a rehearsal env with a world model of its own may live in workers
    assert tiny_config(str(tmp_path), env_workers=2, env_mode="rehearsal", env_id="SyntheticTools-v0",
                       env_kwargs={"world_model": "tiny"}).env_workers == "2"


def test_worker_processes_train_on_the_same_trajectories(tmp_path: Path) -> None:
    runs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        trainer = AgentGRPOTrainer(args=tiny_config(str(out), env_workers=workers, max_steps=1),
                                   env_factory=functools.partial(make_letter_env, horizon=2))
        trainer.train()
        runs[workers] = _episodes(out, 1)
        assert trainer._env_pool.executor is None  # closed at the end of train()
    assert runs["1"] and runs["2"] == runs["1"]


def _trained_traj_ids(trainer: AgentGRPOTrainer) -> list[set[str]]:
    """Per generation batch, the trajectory ids of the rows its credit batch trained on (filled as it trains)."""
    seen: list[set[str]] = []
    score = trainer._generate_and_score_completions

    def recorded(inputs):
        output = score(inputs)
        seen.append({str(t) for t in trainer._credit_batch.traj_ids})
        return output

    trainer._generate_and_score_completions = recorded
    return seen


def test_a_worker_killed_mid_rollout_ends_only_its_episodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = live_descendants()
    factory = functools.partial(WorkerFaultEnv, home_pid=os.getpid(), kill_task="t2-1", once=str(tmp_path / "killed"))
    config = tiny_config(str(tmp_path / "run"), env_workers=2, task_ids=["t1-0", "t2-1"], env_id="WorkerFault-v0")
    trainer = AgentGRPOTrainer(args=config, env_factory=factory)
    closes: list[float] = []
    close = trainer._env_pool.close

    def timed_close() -> None:
        started = time.monotonic()
        close()
        closes.append(time.monotonic() - started)

    monkeypatch.setattr(trainer._env_pool, "close", timed_close)
    trained_per_step = _trained_traj_ids(trainer)
    trainer.train()
    assert trainer.state.global_step == 2

    first = _episodes(tmp_path / "run", 1)
    assert len(first) == 4 and len({e["traj"] for e in first}) == 4  # nothing lost or duplicated
    broken = [e for e in first if e["error"]]
    # each worker held one env of each group; the killed worker's two live episodes broke
    assert len(broken) == 2 and len({e["group"] for e in broken}) == 2
    assert all(e["error_stage"] == "step" and e["error"].startswith("EnvWorkerDied: env worker ") for e in broken)
    assert all("was killed by SIGKILL during step" in e["error"] for e in broken)
    # the first generation batch trained on every episode of its step but the broken ones
    assert trained_per_step[0] == {e["traj"] for e in first} - {e["traj"] for e in broken}

    second = _episodes(tmp_path / "run", 2)
    assert len(second) == 4 and not any(e["error"] for e in second)  # the worker was replaced
    assert closes and max(closes) < 10
    assert not (live_descendants() - before), "worker processes were left behind"


def test_a_hung_worker_ends_only_its_episodes_after_the_step_timeout(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # SIGSTOP: the worker cannot answer at all; step_timeout (plus the grace) bounds the wait, the worker is killed
    from agentgym_suite.rollout.workers import remote

    monkeypatch.setattr(remote, "ANSWER_GRACE_S", 1.0)
    before = live_descendants()
    factory = functools.partial(WorkerFaultEnv, home_pid=os.getpid(), stop_task="t2-1", once=str(tmp_path / "stopped"))
    config = tiny_config(str(tmp_path / "run"), env_workers=2, task_ids=["t1-0", "t2-1"], env_id="WorkerFault-v0",
                         step_timeout=0.5)
    trainer = AgentGRPOTrainer(args=config, env_factory=factory)
    trained_per_step = _trained_traj_ids(trainer)
    started = time.monotonic()
    trainer.train()
    assert trainer.state.global_step == 2
    assert time.monotonic() - started < 120, "the hung worker held the run up"

    first = _episodes(tmp_path / "run", 1)
    assert len(first) == 4 and len({e["traj"] for e in first}) == 4
    broken = [e for e in first if e["error"]]
    assert len(broken) == 2 and len({e["group"] for e in broken}) == 2  # the hung worker's two live episodes
    assert all(e["error_stage"] == "step" and "did not answer within" in e["error"] for e in broken)
    assert trained_per_step[0] == {e["traj"] for e in first} - {e["traj"] for e in broken}
    second = _episodes(tmp_path / "run", 2)
    assert len(second) == 4 and not any(e["error"] for e in second)  # the hung worker was replaced
    assert not (live_descendants() - before), "worker processes were left behind"


def test_config_checks_step_timeout(tmp_path: Path) -> None:
    assert tiny_config(str(tmp_path), step_timeout=30).step_timeout == 30.0
    with pytest.raises(ValueError, match="positive"):
        tiny_config(str(tmp_path), step_timeout=0)


def test_held_out_envs_live_where_env_workers_says(tmp_path: Path) -> None:
    # evaluation during training plays its envs in the trainer's workers, with the same results as inline
    from agentgym_suite.rollout.workers import RemoteEnv

    results = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        config = tiny_config(str(out), env_workers=workers, max_steps=1, eval_strategy="steps", eval_steps=1,
                             eval_task_ids=["t5", "t6"], per_device_eval_batch_size=2)
        trainer = AgentGRPOTrainer(args=config, env_factory=functools.partial(make_letter_env, horizon=2))
        played: list[list] = []
        play = trainer.held_out.play
        trainer.held_out.play = lambda envs, *a, _seen=played, _play=play: (_seen.append(list(envs)), _play(envs, *a))[1]
        trainer.train()
        assert played and all(isinstance(env, RemoteEnv) == (workers == "2") for envs in played for env in envs)
        assert trainer._env_pool.executor is None  # closed with the training envs at the end of train()
        results[workers] = [{k: v for k, v in e.items() if k not in TIMING}
                            for e in read_step(out / "eval_trajectories" / "step_000001.jsonl")]
    assert results["1"] and results["2"] == results["1"]


def test_the_train_command_takes_env_workers_and_step_timeout_flags() -> None:
    from agentgym_suite.commands.train import parse_config

    config = parse_config("configs/smoke_cpu.yaml", ["--env-workers", "2", "--step-timeout", "30"])
    assert (config.env_workers, config.step_timeout) == ("2", 30.0)
    assert parse_config("configs/smoke_cpu.yaml", ["--env_workers", "ray"]).env_workers == "ray"
    with pytest.raises(ValueError, match="N >= 2"):
        parse_config("configs/smoke_cpu.yaml", ["--env-workers", "lots"])

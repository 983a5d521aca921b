"""Vector envs: sync and async, several episodes with auto-reset, and async workers that die."""

from __future__ import annotations

import os
import signal
import time

from pathlib import Path

import numpy as np
import pytest

from agentgym_suite import make_vec
from agentgym_suite.core.process_groups import EnvWorkerDied
from reliability.registered import cheap_kwargs, env_params, skip_unless_usable
from rollout.worker_fakes import live_descendants, register_worker_fakes

FAULT_ID = register_worker_fakes()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_vector_env_steps_through_autoreset(asynchronous: bool) -> None:
    envs = make_vec("TextWorld-v0", 2, asynchronous=asynchronous, n_games=2, challenge="tw-coin_collector",
                    max_episode_steps=4)
    try:
        obs, infos = envs.reset(seed=3)
        assert isinstance(obs, tuple) and len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        finished = 0
        for _ in range(10):
            obs, rewards, terminated, truncated, infos = envs.step(("look", "inventory"))
            finished += int(sum(terminated) + sum(truncated))
        assert finished >= 4  # every sub-env ran out its 4-turn budget at least twice
        assert len(rewards) == 2
    finally:
        envs.close()


def test_make_vec_rejects_zero() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        make_vec("TextWorld-v0", 0)


def plays_in_async_workers(env_id: str, kwargs: dict) -> None:
    """Two copies of ``env_id`` in async worker processes reset, step and auto-reset, and the shared
    info keys come back across the worker boundary."""
    envs = make_vec(env_id, 2, asynchronous=True, max_episode_steps=3, **kwargs)
    try:
        obs, infos = envs.reset(seed=[0, 1])
        assert len(obs) == 2 and all(isinstance(o, str) for o in obs)
        assert list(infos["task_id"])  # shared info keys survive the worker boundary
        for _ in range(4):
            obs, rewards, terminated, truncated, infos = envs.step(("look", "inventory"))
            assert len(obs) == 2
        assert "action_valid" in infos
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", env_params())
def test_every_registered_env_runs_in_async_workers(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made with its own fixture kwargs, so a new env is covered with no edit here."""
    skip_unless_usable(env_id)
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    plays_in_async_workers(env_id, cheap_kwargs(env_id, tmp_path))


# ---------------------------------------------------------------------------- dead workers
def _killed(envs, index: int) -> None:
    os.kill(envs.processes[index].pid, signal.SIGKILL)
    envs.processes[index].join(5)


def _close_quickly(envs) -> None:
    started = time.monotonic()
    envs.close()
    assert time.monotonic() - started < 10


def test_a_worker_killed_mid_step_is_named_and_can_be_replaced() -> None:
    before = live_descendants()
    envs = make_vec(FAULT_ID, 2, asynchronous=True, sleep_s=30)
    try:
        envs.reset(seed=0)
        envs.step_async(("go", "sleep"))
        time.sleep(0.5)
        _killed(envs, 1)
        with pytest.raises(EnvWorkerDied, match=r"sub-env 1 \(worker 1, pid \d+\) was killed by SIGKILL") as caught:
            envs.step_wait()
        assert caught.value.env_indices == (1,) and caught.value.worker == 1
        for _ in range(2):  # every later call says the same, never AlreadyPendingCallError
            with pytest.raises(EnvWorkerDied, match="restart_worker"):
                envs.step(("go", "go"))
        envs.restart_worker(1)
        obs, _ = envs.reset(seed=1, options={"reset_mask": np.array([False, True])})
        assert "Say go" in obs[1]
        _, rewards, terminated, _, _ = envs.step(("go", "go"))
        assert len(rewards) == 2
    finally:
        _close_quickly(envs)
    assert not (live_descendants() - before), "worker processes were left behind"


@pytest.mark.parametrize("env_id", ["TextWorld-v0", "Tau2-v0"])
def test_a_worker_killed_between_steps_is_named_and_close_returns_at_once(env_id: str) -> None:
    before = live_descendants()
    envs = make_vec(env_id, 2, asynchronous=True, max_episode_steps=5)
    try:
        envs.reset(seed=0)
        _killed(envs, 0)
        with pytest.raises(EnvWorkerDied, match=r"sub-env 0 \(worker 0, pid \d+\) was killed by SIGKILL"):
            envs.step(("look", "look"))
        with pytest.raises(EnvWorkerDied, match="sub-env 0"):
            envs.call("task_ids")
        obs, _ = envs.reset(seed=0)  # a full reset restarts the dead worker
        assert len(obs) == 2 and all(obs)
        _killed(envs, 1)
    finally:
        _close_quickly(envs)
    assert not (live_descendants() - before)


def test_a_worker_killed_during_close_does_not_block_it() -> None:
    envs = make_vec(FAULT_ID, 2, asynchronous=True, sleep_s=60)
    envs.reset(seed=0)
    envs.step_async(("sleep", "sleep"))  # both busy for a minute: close must not wait for them
    _close_quickly(envs)
    assert not any(p.is_alive() for p in envs.processes)

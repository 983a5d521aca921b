"""``agentgym eval`` over served envs: a pool of sessions on `agentgym serve` (same results as
inline), and an OpenEnv env served by someone else (OpenEnv's own echo template) as a suite env."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401
from agentgym_suite.cli import main
from serving.conftest import ServerProcess, free_port


def _episodes(out: Path) -> list[dict]:
    lines = (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda r: (r["task_id"], r.get("attempt", 0)))


def test_eval_through_openenv_servers_equals_inline(tools_server: ServerProcess, tmp_path: Path) -> None:
    common = ["eval", "SyntheticTools-v0", "--agent", "random", "--episodes", "3", "--seed", "4", "--max-turns", "3",
              "--batch-size", "3"]
    assert main([*common, "--out", str(tmp_path / "inline"), "--env-workers", "1"]) == 0
    assert main([*common, "--out", str(tmp_path / "served"), "--env-workers", f"openenv://127.0.0.1:{tools_server.port}"]) == 0
    inline, served = _episodes(tmp_path / "inline"), _episodes(tmp_path / "served")
    assert len(served) == 3 and not any(r.get("error") for r in served)
    for a, b in zip(inline, served):
        assert a["task_id"] == b["task_id"]
        assert [t["observation"] for t in a["turns"]] == [t["observation"] for t in b["turns"]]
        assert [t["reward"] for t in a["turns"]] == [t["reward"] for t in b["turns"]]


@pytest.fixture(scope="module")
def echo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """OpenEnv's own echo env (the `openenv init` template, from the openenv package) under uvicorn."""
    root = tmp_path_factory.mktemp("openenv-echo")
    openenv_cli = Path(sys.executable).parent / "openenv"
    subprocess.run([str(openenv_cli), "init", "echo_env", "-o", str(root)], check=True, capture_output=True, timeout=120)
    app = root / "echo_env" / "server" / "app.py"  # the template serves one session; its comment says to raise it
    app.write_text(app.read_text().replace("max_concurrent_envs=1,", "max_concurrent_envs=8,"))
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1", "--port",
                                str(port)], cwd=root / "echo_env", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "the echo server did not start"
                time.sleep(0.3)
        yield f"ws://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


def test_remote_env_maps_a_foreign_openenv_env(echo_server: str) -> None:
    env = gym.make("Remote-v0", url=echo_server, num_tasks=2)
    try:
        assert not env.unwrapped.ours and env.unwrapped.mapping.text_field == "message"
        assert env.unwrapped.task_ids() == ["episode-0", "episode-1"]
        obs, info = env.reset(seed=0)
        assert "ready" in obs and info["tools"] is None and info["won"] is False
        obs, reward, terminated, truncated, info = env.step("hello")
        assert "echoed_message: hello" in obs and "message_length: 5" in obs
        assert reward == pytest.approx(0.5) and not terminated and not truncated and info["action_valid"]
    finally:
        env.close()


def test_eval_runs_a_foreign_openenv_env(echo_server: str, tmp_path: Path) -> None:
    kwargs = json.dumps({"url": echo_server, "num_tasks": 2})
    assert main(["eval", "Remote-v0", "--env-kwargs", kwargs, "--agent", "random", "--episodes", "2", "--max-turns", "2",
                 "--out", str(tmp_path / "echo")]) == 0
    episodes = _episodes(tmp_path / "echo")
    assert len(episodes) == 2 and all(len(r["turns"]) == 2 for r in episodes)
    assert all("echoed_message" in t["observation"] for r in episodes for t in r["turns"])


@pytest.mark.slow  # one tiny training step
def test_trainer_trains_on_a_foreign_openenv_env(echo_server: str, tmp_path: Path) -> None:
    from agentgym_suite.trainers import AgentGRPOTrainer
    from agentgym_suite.trainers.trajectory_log import read_step
    from trainers.conftest import tiny_config

    trainer = AgentGRPOTrainer(args=tiny_config(str(tmp_path), env_id="Remote-v0",
                                                env_kwargs={"url": echo_server, "num_tasks": 4}, max_steps=1))
    trainer.train()
    rows = read_step(tmp_path / "trajectories" / "step_000001.jsonl")
    assert trainer.state.global_step == 1 and rows
    assert not [row["error"] for row in rows if row.get("error")]
    assert all("echoed_message" in turn["observation"] for row in rows for turn in row["turns"])

"""Steps per second of one env id under its oracle: the measured cost an env card states.

Usage::

    AGENTGYM_DATA=/path/to/data python benchmarks/env_step_cost.py ENV_ID [--kwargs JSON] [--steps 200]
    python benchmarks/env_step_cost.py Remote-v0 --served SyntheticTools-v0 [--kwargs JSON]

Without ``--kwargs`` the env is made with its own ``fixture_kwargs`` (the small offline set the
tests use). The oracle's first action is played from the first task ids, one episode after the
other, until ``--steps`` steps have been timed; resets are timed apart.

``Remote-v0`` has no oracle: the served env (``--served``) is played inline first, its actions
are recorded, then ``agentgym serve`` runs it on a loopback port and the same actions go through
``Remote-v0``; both rates print side by side with their ratio (the price of the wire).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator

import agentgym_suite.registration as registration
from ratios import report_ratio

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Timing:
    """Steps and resets timed over a run, and the actions played per task (for a replay)."""

    steps: int = 0
    step_s: float = 0.0
    resets: int = 0
    reset_s: float = 0.0
    wins: int = 0
    ended: int = 0
    played: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.step_s if self.step_s else float("inf")

    def row(self, label: str) -> str:
        reset_ms = 1000 * self.reset_s / max(self.resets, 1)
        return (f"{label:<44} {self.steps:>6} steps {self.resets:>4} episodes  reset {reset_ms:8.2f} ms  "
                f"{self.steps_per_s:9.1f} steps/s  oracle won {self.wins}/{self.ended} ended episodes")


def make_kwargs(env_id: str, given: dict[str, Any] | None) -> dict[str, Any]:
    """``given``, or the env class's fixture kwargs written to a scratch folder."""
    if given is not None:
        return given
    env_class = load_env_creator(registration.entry(env_id).entry_point)
    return env_class.fixture_kwargs(Path(tempfile.mkdtemp(prefix="env-step-cost-")))


def play_oracle(env: gymnasium.Env, steps: int, max_episode_steps: int = 100) -> Timing:
    """Play the oracle's first action over the task ids (cycling) until ``steps`` steps are timed."""
    timing = Timing()
    task_ids = list(env.unwrapped.task_ids())
    if not task_ids:
        raise SystemExit("the env has no task ids with these kwargs")
    number = 0
    while timing.steps < steps:
        task_id = task_ids[number % len(task_ids)]
        number += 1
        start = time.perf_counter()
        env.reset(seed=0, options={"task_id": task_id})
        timing.reset_s += time.perf_counter() - start
        timing.resets += 1
        actions: list[str] = []
        done = truncated = False
        info: dict[str, Any] = {}
        while not (done or truncated) and len(actions) < max_episode_steps and timing.steps < steps:
            action = env.unwrapped.oracle()[0]
            start = time.perf_counter()
            _, _, done, truncated, info = env.step(action)
            timing.step_s += time.perf_counter() - start
            timing.steps += 1
            actions.append(action)
        timing.ended += int(done or truncated)
        timing.wins += int(bool(info.get("won")))
        timing.played.append((task_id, actions))
    return timing


def replay(env: gymnasium.Env, played: list[tuple[str, list[str]]]) -> Timing:
    """Play recorded actions again, task by task, timing steps and resets as :func:`play_oracle` does."""
    timing = Timing()
    for task_id, actions in played:
        start = time.perf_counter()
        env.reset(seed=0, options={"task_id": task_id})
        timing.reset_s += time.perf_counter() - start
        timing.resets += 1
        info: dict[str, Any] = {}
        done = truncated = False
        for action in actions:
            start = time.perf_counter()
            _, _, done, truncated, info = env.step(action)
            timing.step_s += time.perf_counter() - start
            timing.steps += 1
        timing.ended += int(done or truncated)
        timing.wins += int(bool(info.get("won")))
    return timing


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def served(env_id: str, kwargs: dict[str, Any], timeout_s: float = 180.0) -> tuple[subprocess.Popen, str]:
    """Start ``agentgym serve env_id`` on a free loopback port; return the process and its ws:// URL."""
    port = _free_port()
    command = [sys.executable, "-m", "agentgym_suite.cli", "serve", env_id, "--port", str(port),
               "--env-kwargs", json.dumps(kwargs)]
    process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"agentgym serve {env_id} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if json.loads(response.read()).get("status") == "healthy":
                    return process, f"ws://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.3)
    stop(process)
    raise SystemExit(f"agentgym serve {env_id} was not healthy within {timeout_s:g} s")


def stop(process: subprocess.Popen) -> None:
    """End the server started by :func:`served` (its own process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def main() -> None:
    """Measure one env id and print its row (two rows and their ratio for Remote-v0)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("env_id")
    parser.add_argument("--kwargs", type=json.loads, default=None, help="make kwargs as JSON (default: fixture kwargs)")
    parser.add_argument("--steps", type=int, default=200, help="steps to time")
    parser.add_argument("--served", default="SyntheticTools-v0", help="the env Remote-v0 plays on the server")
    args = parser.parse_args()
    registration.register_all()
    load = os.getloadavg()[0]
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, load average {load:.1f}")
    if args.env_id != "Remote-v0":
        env = gymnasium.make(args.env_id, **make_kwargs(args.env_id, args.kwargs))
        print(play_oracle(env, args.steps).row(args.env_id))
        env.close()
        return
    kwargs = make_kwargs(args.served, args.kwargs)
    local = gymnasium.make(args.served, **kwargs)
    inline = play_oracle(local, args.steps)
    local.close()
    process, url = served(args.served, kwargs)
    try:
        remote = gymnasium.make("Remote-v0", url=url)
        over_wire = replay(remote, inline.played)
        remote.close()
    finally:
        stop(process)
    print(inline.row(f"{args.served} inline"))
    print(over_wire.row(f"Remote-v0 -> agentgym serve {args.served}"))
    report_ratio(f"Remote-v0 / inline steps/s ({args.served}, loopback)", over_wire.steps_per_s / inline.steps_per_s,
                 "-", f"{over_wire.steps_per_s:.1f} / {inline.steps_per_s:.1f} steps/s")


if __name__ == "__main__":
    main()

"""Steps/s and added latency per step through ``agentgym serve`` (OpenEnv's server, loopback)
against the same env in-process, for a cheap command env (TextWorld) and a tool env
(SyntheticTools), with 1, 16 and 64 concurrent sessions; and how many concurrent sessions one
server holds before its p99 step latency doubles.

    python benchmarks/serve_latency.py [--steps 400] [--sweep 1,2,4,8,16,32,64]

Each session is a thread with its own WebSocket (the suite's ``WireSession``), resetting when an
episode ends; latency is measured around each ``step`` round trip. Targets: <= 2 ms added per
step at one session; 64 concurrent sessions with no error. The client threads share the machine
(and the GIL) with the server, so on a small machine the high-concurrency numbers include the
client's own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from ratios import report_ratio  # noqa: E402

ENVS = {
    "TextWorld-v0": ({"challenge": "tw-coin_collector", "n_games": 2}, ["look", "inventory"]),
    "SyntheticTools-v0": ({}, ['<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>']),
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def in_process(env_id: str, kwargs: dict, actions: list[str], steps: int) -> list[float]:
    """Per-step seconds of ``env.step`` in this process."""
    import gymnasium as gym

    import agentgym_suite  # noqa: F401

    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    latencies = []
    for i in range(steps):
        started = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(actions[i % len(actions)])
        latencies.append(time.perf_counter() - started)
        if terminated or truncated:
            env.reset(seed=i)
    env.close()
    return latencies


class Server:
    def __init__(self, env_id: str, kwargs: dict) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentgym_suite.cli", "serve", env_id, "--port", str(self.port), "--max-sessions",
             "128", "--env-kwargs", json.dumps(kwargs)], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2)
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"agentgym serve {env_id} did not start") from None
                time.sleep(0.3)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(15)


def served(url: str, actions: list[str], sessions: int, steps_each: int) -> tuple[list[float], float, int]:
    """Per-step round-trip seconds over ``sessions`` concurrent sessions, the wall time of the
    stepping phase, and how many sessions failed."""
    from agentgym_suite.serving.wire import WireSession

    latencies: list[list[float]] = [[] for _ in range(sessions)]
    errors: list[str] = []
    ready = threading.Barrier(sessions + 1)

    def play(index: int) -> None:
        session = WireSession(url, message_timeout=120)
        try:
            session.request("reset", {"seed": index})
        except Exception as exc:  # counted below
            errors.append(repr(exc))
        ready.wait()
        try:
            for i in range(steps_each):
                started = time.perf_counter()
                answer = session.request("step", {"message": actions[i % len(actions)]})
                latencies[index].append(time.perf_counter() - started)
                if answer.get("done"):
                    session.request("reset", {"seed": index + 1000 * i})
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            session.close()

    threads = [threading.Thread(target=play, args=(i,), daemon=True) for i in range(sessions)]
    for thread in threads:
        thread.start()
    ready.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join(600)
    wall = time.perf_counter() - started
    return [x for per in latencies for x in per], wall, len(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="steps per setting, spread over its sessions")
    parser.add_argument("--sweep", default="1,2,4,8,16,32,64", help="session counts for the p99-doubling sweep")
    cli = parser.parse_args()
    sweep = [int(x) for x in cli.sweep.split(",")]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start (shared with other "
          "engineers' jobs: absolute numbers are noisy, read the ratios)")
    for env_id, (kwargs, actions) in ENVS.items():
        local = in_process(env_id, kwargs, actions, cli.steps)
        server = Server(env_id, kwargs)
        try:
            served(server.url, actions, 1, 20)  # warm-up
            rows = []
            for sessions in sorted(set(sweep) | {1, 16, 64}):
                lat, wall, errors = served(server.url, actions, sessions, max(10, cli.steps // sessions))
                rows.append({"sessions": sessions, "steps_per_s": len(lat) / wall, "p50_ms": 1e3 * statistics.median(lat),
                             "p99_ms": 1e3 * percentile(lat, 0.99), "errors": errors})
        finally:
            server.stop()
        local_p50 = 1e3 * statistics.median(local)
        print(f"\n{env_id}: in-process step p50 {local_p50:.3f} ms, p99 {1e3 * percentile(local, 0.99):.3f} ms, "
              f"{len(local) / sum(local):.0f} steps/s")
        print(f"{'sessions':>8}{'steps/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'added p50 ms':>14}{'errors':>8}")
        for row in rows:
            print(f"{row['sessions']:>8}{row['steps_per_s']:>10.0f}{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}"
                  f"{row['p50_ms'] - local_p50:>14.2f}{row['errors']:>8}")
        one = next(r for r in rows if r["sessions"] == 1)
        doubled = next((r["sessions"] for r in rows if r["p99_ms"] >= 2 * one["p99_ms"]), None)
        print(f"p99 doubles (>= {2 * one['p99_ms']:.2f} ms) at {doubled or f'more than {max(sweep)}'} sessions")
        report_ratio(f"{env_id}: added ms per step through the server, 1 session (p50)", one["p50_ms"] - local_p50,
                     "<= 2", f"in-process p50 {local_p50:.3f} ms; loopback")
        for row in rows:
            if row["sessions"] in (16, 64):
                report_ratio(f"{env_id}: served steps/s, {row['sessions']} sessions / 1 session",
                             row["steps_per_s"] / one["steps_per_s"], "-",
                             f"{row['errors']} errors, p99 {row['p99_ms']:.1f} ms")
        report_ratio(f"{env_id}: sessions before served p99 step latency doubles", float(doubled or 2 * max(sweep)),
                     "-", f"p99 at 1 session {one['p99_ms']:.2f} ms")


if __name__ == "__main__":
    main()

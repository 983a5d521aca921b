"""Load on one ``agentgym serve`` server through OpenEnv's own client, loopback only.

    python benchmarks/serve_load.py [--sessions 8,64,128,256] [--steps 30] [--soak 600]
                                    [--envs SyntheticTools-v0,TextWorld-v0] [--max-seconds 1800]

For each env and each N, a fresh server is started on 127.0.0.1 with ``--max-sessions N`` (the
capacity matches the load) and a bearer token; N sessions of OpenEnv's ``GenericEnvClient``
(one asyncio loop, one WebSocket each) reset and play M steps each. Printed side by side: requests
per second (resets and steps), p50 and p99 step latency, errors within capacity, the answer a
session past capacity gets, and the server's resident memory (the process and its children)
before the load, after it, and after a soak: rounds of the same load, back to back, for
``--soak`` seconds (the issue asks 600; ``--soak 0`` skips it), with the growth over the soak.

Bounded and self-stopping: loopback only; every request has a timeout; each setting has a
deadline and the whole run stops at ``--max-seconds``, when the server's memory passes
``--max-rss-mb`` (the row says so), or at the first N whose sessions cannot all connect; every
server is killed in a ``finally``. The client shares the machine with the server, so on a small
machine the figures include the client's own cost; state the machine beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

ENVS = {
    "SyntheticTools-v0": ({}, ['<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>']),
    "TextWorld-v0": ({"challenge": "tw-coin_collector", "n_games": 2}, ["look", "inventory"]),
}
"""Each env's kwargs and the actions its sessions send (cheap, valid to send any number of times)."""
MESSAGE_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 60.0


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            with open(f"/proc/{current}/status", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


class Server:
    """``agentgym serve ENV --max-sessions N`` on a free loopback port, in its own process group."""

    def __init__(self, env_id: str, kwargs: dict, capacity: int, token: str) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.http = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, PYTHONPATH=str(ROOT), AGENTGYM_SERVE_TOKEN=token)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentgym_suite.cli", "serve", env_id, "--host", "127.0.0.1", "--port",
             str(self.port), "--max-sessions", str(capacity), "--env-kwargs", json.dumps(kwargs)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(self.http + "/health", timeout=2)
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"agentgym serve {env_id} did not start") from None
                time.sleep(0.3)

    def rss(self) -> float:
        return rss_mb(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(15)


@dataclass
class Round:
    """What one round of N sessions x M steps measured."""

    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0


async def one_round(http: str, token: str, sessions: int, steps: int, actions: list[str], deadline: float) -> Round:
    """N sessions at once through OpenEnv's GenericEnvClient, each a reset and ``steps`` steps."""
    from openenv.core import GenericEnvClient

    result = Round()
    headers = {"Authorization": f"Bearer {token}"}
    opened = asyncio.Barrier(sessions) if hasattr(asyncio, "Barrier") else None

    async def play(index: int) -> None:
        client = GenericEnvClient(base_url=http, headers=headers, connect_timeout_s=CONNECT_TIMEOUT_S,
                                  message_timeout_s=MESSAGE_TIMEOUT_S)
        try:
            await client.connect()
            await client.reset(seed=index)
            result.requests += 1
            if opened is not None:
                await opened.wait()  # every session holds its env before anyone steps
            for i in range(steps):
                if time.monotonic() > deadline:
                    raise TimeoutError("the setting's deadline passed")
                started = time.perf_counter()
                answer = await client.step({"message": actions[i % len(actions)]})
                result.latencies.append(time.perf_counter() - started)
                result.requests += 1
                if answer.done:
                    await client.reset(seed=index + 1000 * (i + 1))
                    result.requests += 1
        except Exception as exc:  # counted, the others go on
            result.errors.append(f"{type(exc).__name__}: {str(exc)[:160]}")
            if opened is not None and not opened.broken:
                await opened.abort()
        finally:
            try:
                await client.close()
            except Exception:  # a broken connection has nothing left to close
                pass

    started = time.perf_counter()
    await asyncio.gather(*(play(i) for i in range(sessions)))
    result.wall = time.perf_counter() - started
    return result


async def past_capacity(http: str, token: str, sessions: int) -> str:
    """Hold ``sessions`` sessions (the capacity) and open one more: the error it gets."""
    from openenv.core import GenericEnvClient

    headers = {"Authorization": f"Bearer {token}"}
    held = [GenericEnvClient(base_url=http, headers=headers, message_timeout_s=MESSAGE_TIMEOUT_S)
            for _ in range(sessions)]
    try:
        await asyncio.gather(*(c.connect() for c in held))
        await asyncio.gather(*(c.reset(seed=0) for c in held))
        extra = GenericEnvClient(base_url=http, headers=headers, message_timeout_s=30)
        try:
            await extra.connect()
            await extra.reset(seed=0)
            return "accepted (no limit!)"
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc)[:80]}"
        finally:
            try:
                await extra.close()
            except Exception:
                pass
    finally:
        for client in held:
            try:
                await client.close()
            except Exception:
                pass


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def measure(env_id: str, sessions: int, steps: int, soak: float, until: float, max_rss: float) -> dict:
    """One row: a fresh server with capacity ``sessions``, one measured round, the capacity probe, the soak."""
    kwargs, actions = ENVS[env_id]
    token = secrets.token_urlsafe(24)
    server = Server(env_id, kwargs, sessions, token)
    row: dict = {"env": env_id, "sessions": sessions}
    try:
        time.sleep(1.0)
        row["rss_before"] = server.rss()
        deadline = min(until, time.monotonic() + 600)
        first = asyncio.run(one_round(server.http, token, sessions, steps, actions, deadline))
        row.update(requests=first.requests, wall=first.wall, rps=first.requests / first.wall if first.wall else 0.0,
                   p50_ms=1000 * percentile(first.latencies, 0.5), p99_ms=1000 * percentile(first.latencies, 0.99),
                   errors=len(first.errors), first_error=first.errors[0] if first.errors else "")
        row["rss_after"] = server.rss()
        row["past_capacity"] = asyncio.run(past_capacity(server.http, token, sessions))
        rounds, soak_errors, soak_started = 0, 0, time.monotonic()
        stop = min(until, soak_started + soak)
        while soak > 0 and time.monotonic() < stop:
            if server.rss() > max_rss:
                row["stopped"] = f"server RSS above {max_rss:g} MB"
                break
            done = asyncio.run(one_round(server.http, token, sessions, steps, actions, stop + 120))
            rounds += 1
            soak_errors += len(done.errors)
        row.update(soak_s=time.monotonic() - soak_started if soak > 0 else 0.0, soak_rounds=rounds,
                   soak_errors=soak_errors, rss_soak=server.rss())
    finally:
        server.stop()
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="8,64,128,256", help="concurrent sessions per setting (capacity to match)")
    parser.add_argument("--steps", type=int, default=30, help="steps each session plays per round")
    parser.add_argument("--soak", type=float, default=600.0, help="seconds of back-to-back rounds after the first (0: none)")
    parser.add_argument("--envs", default=",".join(ENVS), help=f"comma-separated, from {', '.join(ENVS)}")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="the whole run stops after this long")
    parser.add_argument("--max-rss-mb", type=float, default=6000.0, help="stop a setting when the server holds more")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the rows as JSON")
    cli = parser.parse_args()
    until = time.monotonic() + cli.max_seconds
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} at the start, client and server on the same "
          f"cores (shared with other jobs); {cli.steps} steps per session per round; soak {cli.soak:g} s")
    header = (f"{'env':<18} {'N':>4} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}  {'RSS MB before/after/soak':>25} "
              f"{'soak growth':>11}  {'soak':>14}  past capacity")
    print(header)
    rows = []
    for env_id in cli.envs.split(","):
        for sessions in (int(n) for n in cli.sessions.split(",")):
            if time.monotonic() > until:
                print(f"{env_id:<18} {sessions:>4} (not run: --max-seconds reached)")
                continue
            row = measure(env_id, sessions, cli.steps, cli.soak, until, cli.max_rss_mb)
            rows.append(row)
            growth = row["rss_soak"] - row["rss_after"]
            soak = f"{row['soak_rounds']} rounds/{row['soak_s']:.0f}s" + (f" {row['soak_errors']} err" if row["soak_errors"] else "")
            print(f"{env_id:<18} {sessions:>4} {row['rps']:>7.0f} {row['p50_ms']:>8.1f} {row['p99_ms']:>8.1f} "
                  f"{row['errors']:>6}  {row['rss_before']:>7.0f} / {row['rss_after']:>6.0f} / {row['rss_soak']:>6.0f} "
                  f"{growth:>+10.1f}  {soak:>14}  {row['past_capacity']}" + (f"  [{row['stopped']}]" if row.get("stopped") else ""),
                  flush=True)
            if row["errors"]:
                print(f"    first error: {row['first_error']}")
    if cli.json:
        Path(cli.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    within = sum(r["errors"] + r["soak_errors"] for r in rows)
    print(f"errors within capacity: {within}; largest soak growth: "
          f"{max((r['rss_soak'] - r['rss_after'] for r in rows), default=0.0):+.1f} MB "
          f"(mean over settings {statistics.fmean([r['rss_soak'] - r['rss_after'] for r in rows]) if rows else 0.0:+.1f})")
    return 0 if within == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

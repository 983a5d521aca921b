"""Real ``agentgym serve`` processes on free loopback ports, for the serving tests."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openenv", reason="the serving tests need the extra agentgym-suite[serve]")

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180.0
TEXTWORLD_KWARGS = {"challenge": "tw-coin_collector", "n_games": 2}


def raw_handshake(port: int) -> socket.socket:
    """A TCP connection to ``/ws`` upgraded to a WebSocket by hand, for clients that misbehave below
    the library (and leave no client library to tidy up after them)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection during the handshake"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 101"), answer[:200]
    return sock


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """One ``agentgym serve`` subprocess (its own process group, ended by its pid)."""

    def __init__(self, env_id: str, env_kwargs: dict | None = None, *args: str, cache: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.http = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        if cache is not None:
            env["AGENTGYM_CACHE"] = str(cache)
        command = [sys.executable, "-m", "agentgym_suite.cli", "serve", env_id, "--port", str(self.port),
                   "--env-kwargs", json.dumps(env_kwargs or {}), *args]
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode(errors="replace") if self.process.stdout else ""
                raise RuntimeError(f"agentgym serve exited with {self.process.returncode}:\n{output[-3000:]}")
            try:
                with urllib.request.urlopen(self.http + "/health", timeout=2) as response:
                    if json.loads(response.read())["status"] == "healthy":
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"agentgym serve did not become healthy within {START_TIMEOUT_S:g} s")

    def kill(self) -> None:
        """SIGKILL the server's process group at once (a crash)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """End the server: SIGTERM, then SIGKILL after a few seconds."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process.stdout:
            self.process.stdout.close()


@pytest.fixture(scope="package")
def serve_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache folder for the package's servers and local envs (TextWorld games are generated once)."""
    path = tmp_path_factory.mktemp("serve-cache")
    before = os.environ.get("AGENTGYM_CACHE")
    os.environ["AGENTGYM_CACHE"] = str(path)
    yield path
    if before is None:
        os.environ.pop("AGENTGYM_CACHE", None)
    else:
        os.environ["AGENTGYM_CACHE"] = before


@pytest.fixture(scope="package")
def textworld_server(serve_cache: Path) -> Iterator[ServerProcess]:
    """``agentgym serve TextWorld-v0`` (two coin-collector games), shared by the package's tests."""
    server = ServerProcess("TextWorld-v0", TEXTWORLD_KWARGS, "--max-sessions", "8", cache=serve_cache)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def tools_server(serve_cache: Path) -> Iterator[ServerProcess]:
    """``agentgym serve SyntheticTools-v0``: a tool env, shared by the package's tests."""
    server = ServerProcess("SyntheticTools-v0", {}, "--max-sessions", "8", cache=serve_cache)
    yield server
    server.stop()

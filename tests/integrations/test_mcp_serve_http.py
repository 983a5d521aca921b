"""``agentgym serve --mcp`` over streamable HTTP: sessions isolated, malformed requests refused, the
server alive after them; and ``agentgym list`` showing both bridges' requirements."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client import streamable_http  # noqa: E402

import agentgym_suite  # noqa: F401,E402
from agentgym_suite.core.tool_calls import parse_tool_calls  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OPEN = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served_mcp(**extra_env: str) -> Iterator[str]:
    """``agentgym serve SyntheticTools-v0 --mcp`` on a free loopback port (``extra_env`` in its
    environment); its URL once it listens."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **extra_env}
    process = subprocess.Popen([sys.executable, "-m", "agentgym_suite.cli", "serve", "SyntheticTools-v0", "--mcp",
                                "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(20)


@pytest.fixture(scope="module")
def mcp_url():
    with served_mcp() as url:
        yield url


async def play(url: str, seed: int, finish: bool) -> dict:
    """One session: reset with ``seed``, play the local oracle's moves when ``finish``; its score()."""
    import gymnasium as gym

    async with OPEN(url) as (read, write, *_), ClientSession(read, write) as session:
        await session.initialize()
        started = await session.call_tool("reset", {"seed": seed})
        local = gym.make("SyntheticTools-v0")
        local.reset(seed=seed, options={"task_id": started.structuredContent["task_id"]})
        terminated = truncated = not finish
        while not (terminated or truncated):
            action = local.unwrapped.oracle()[0]
            _, _, terminated, truncated, _ = local.step(action)
            message = parse_tool_calls(action)
            for call in message.calls:
                await session.call_tool(call.name, call.arguments)
            if not message.calls:
                await session.call_tool("send_message", {"text": action})
        local.close()
        return (await session.call_tool("score", {})).structuredContent


@pytest.mark.slow
def test_http_sessions_are_isolated_and_malformed_requests_leave_the_server_up(mcp_url: str) -> None:
    async def both() -> tuple[dict, dict]:
        results: dict[str, dict] = {}

        async def run(name: str, seed: int, finish: bool) -> None:
            results[name] = await play(mcp_url, seed, finish)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "finished", 2, True)
            group.start_soon(run, "idle", 3, False)
        return results["finished"], results["idle"]

    finished, idle = anyio.run(both)
    assert finished["won"] and finished["reward"] == 1.0 and finished["terminated"]
    assert idle["turn"] == 0 and not idle["terminated"] and idle["reward"] == 0.0

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}', b"\x00" * 10_000):
        answer = httpx.post(mcp_url, content=body, headers=headers, timeout=30)
        assert 400 <= answer.status_code < 500, (body[:20], answer.status_code)
    assert anyio.run(play, mcp_url, 4, True)["won"]  # still serving


def test_agentgym_list_shows_both_bridges_and_what_they_need(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import importlib.util

    from agentgym_suite.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("mcp", "verifiers") else real(name, *a))
    assert main(["list", "--plain"]) == 0
    lines = {line.split("\t")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "missing: package mcp" in lines["MCP-v0"] and "missing: package verifiers" in lines["Verifiers-v0"]


def test_serve_mcp_refuses_a_reachable_address_without_a_token(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from agentgym_suite.cli import main

    monkeypatch.delenv("AGENTGYM_SERVE_TOKEN", raising=False)
    assert main(["serve", "SyntheticTools-v0", "--mcp", "--host", "0.0.0.0", "--port", str(free_port())]) == 2
    assert "without a token" in capsys.readouterr().err


@pytest.mark.slow
def test_a_token_protected_mcp_server_lets_in_only_the_client_with_the_token() -> None:
    from agentgym_suite.integrations.mcp.session import McpConnection, McpServerError

    token = "mcp-test-token-7f3a"
    with served_mcp(AGENTGYM_SERVE_TOKEN=token) as url:
        unauthorised = httpx.post(url, content=b"{}", headers={"Content-Type": "application/json"}, timeout=30)
        assert unauthorised.status_code == 401 and token not in unauthorised.text
        with pytest.raises(McpServerError) as refused:
            McpConnection(url, connect_timeout=20, token="wrong-token")
        assert "wrong-token" not in str(refused.value)
        connection = McpConnection(url, connect_timeout=30, token=token)
        try:
            assert {"reset", "send_message", "score"} <= {tool.name for tool in connection.list_tools()}
        finally:
            connection.close()

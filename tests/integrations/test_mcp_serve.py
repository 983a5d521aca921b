"""``agentgym serve --mcp``: the ``mcp`` SDK's own client plays a suite env served as an MCP server, and
gets what ``gym.make`` gives on the same calls."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

import agentgym_suite  # noqa: F401,E402
from agentgym_suite.core.tool_calls import parse_tool_calls  # noqa: E402
from agentgym_suite.integrations.mcp.server import McpEnvServer  # noqa: E402
from agentgym_suite.registration import entry, missing_requirements  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def server_params(env_id: str, env_kwargs: dict[str, Any]) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "agentgym_suite.cli", "serve", env_id, "--mcp", "--transport", "stdio",
        "--env-kwargs", json.dumps(env_kwargs), "--show-errors"])


def local_oracle_run(env_id: str, kwargs: dict[str, Any], task_id: str, seed: int) -> tuple[list[str], float, dict]:
    """The oracle's messages on a local env, the reward they earn and the last info."""
    env = gym.make(env_id, **kwargs)
    try:
        env.reset(seed=seed, options={"task_id": task_id})
        actions, total, info = [], 0.0, {}
        for _ in range(60):
            action = env.unwrapped.oracle()[0]
            actions.append(action)
            _, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            if terminated or truncated:
                return actions, total, info
        raise AssertionError("the oracle did not finish")
    finally:
        env.close()


@contextlib.asynccontextmanager
async def mcp_session(env_id: str, kwargs: dict[str, Any], through_cli: bool):
    """A client session on ``agentgym serve --mcp`` over stdio, or on the same server in this process."""
    if through_cli:
        async with stdio_client(server_params(env_id, kwargs)) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session
    else:
        server = McpEnvServer(env_id, kwargs, show_errors=True)
        try:
            async with create_connected_server_and_client_session(server.server) as session:
                yield session
        finally:
            server.close()


async def play_over_mcp(env_id: str, kwargs: dict[str, Any], task_id: str, seed: int, actions: list[str],
                        through_cli: bool) -> dict:
    """The same messages through the MCP server, each call one MCP tool call; returns ``score()``."""
    async with mcp_session(env_id, kwargs, through_cli) as session:
        before = {t.name for t in (await session.list_tools()).tools}
        assert before == {"reset", "send_message", "score"}
        started = await session.call_tool("reset", {"task_id": task_id, "seed": seed})
        assert not started.isError and started.structuredContent["task_id"] == task_id
        after = {t.name for t in (await session.list_tools()).tools}
        assert set(started.structuredContent["tools"]) <= after and len(after) > 3
        for action in actions:
            message = parse_tool_calls(action)
            if message.calls:
                (call,) = message.calls
                result = await session.call_tool(call.name, call.arguments)
            else:
                result = await session.call_tool("send_message", {"text": action})
            assert not result.isError, result.content
        scored = await session.call_tool("score", {})
        return scored.structuredContent


@pytest.mark.skipif(bool(missing_requirements(entry("Tau2-v0"))), reason="τ² data is not here")
@pytest.mark.parametrize("through_cli", [pytest.param(True, marks=pytest.mark.slow, id="cli-stdio"),
                                         pytest.param(False, id="in-process")])
def test_a_seeded_tau2_retail_episode_over_mcp_pays_what_gym_make_pays(through_cli: bool) -> None:
    kwargs = {"domain": "retail"}
    task_id = gym.make("Tau2-v0", **kwargs).unwrapped.task_ids()[0]
    actions, reward, info = local_oracle_run("Tau2-v0", kwargs, task_id, seed=3)
    assert any("<tool_call>" in a for a in actions) and any("<tool_call>" not in a for a in actions)
    assert info["won"] and reward == 1.0  # an episode that pays, so equal rewards say something
    scored = anyio.run(play_over_mcp, "Tau2-v0", kwargs, task_id, 3, actions, through_cli)
    assert scored["terminated"] and scored["reward"] == reward and scored["won"] == info["won"]
    local_hash = info["reward_breakdown"]["details"]["db_hash"]
    assert scored["info"]["reward_breakdown"]["details"]["db_hash"] == local_hash


async def hostile_session() -> list[Any]:
    async with mcp_session("SyntheticTools-v0", {}, through_cli=False) as session:
        answers = [await session.call_tool("send_message", {"text": "hello"})]  # before reset
        answers.append(await session.call_tool("reset", {"task_id": "no-such-task"}))
        answers.append(await session.call_tool("reset", {"seed": -4}))
        ok = await session.call_tool("reset", {"seed": 1})
        assert not ok.isError
        answers.append(await session.call_tool("no_such_tool", {"x": 1}))
        tool = ok.structuredContent["tools"][0]
        answers.append(await session.call_tool(tool, {"unexpected": "x" * 100_000}))
        answers.append(await session.call_tool("send_message", {"text": 42}))
        answers.append(await session.call_tool("send_message", {"text": '<tool_call>{"name": "x"}</tool_call>'}))
        answers.append(await session.call_tool("score", {}))
        return answers


def test_hostile_calls_get_error_results_and_the_session_goes_on() -> None:
    *refused, scored = anyio.run(hostile_session)
    assert all(answer.isError for answer in refused), [a.content[0].text[:200] for a in refused if not a.isError]
    texts = [answer.content[0].text for answer in refused]
    assert "call reset first" in texts[0] and "unknown task_id" in texts[1] and "non-negative" in texts[2]
    assert "no tool named" in texts[3]
    assert not scored.isError and scored.structuredContent["terminated"] is False


async def two_sessions() -> tuple[dict, dict]:
    """Two sessions on one server: one plays its task to the end while the other has only reset."""
    server = McpEnvServer("SyntheticTools-v0", {})
    try:
        async with create_connected_server_and_client_session(server.server) as first, \
                create_connected_server_and_client_session(server.server) as second:
            a = await first.call_tool("reset", {"seed": 5})
            await second.call_tool("reset", {"seed": 6})
            task_id = a.structuredContent["task_id"]
            actions, _, _ = local_oracle_run("SyntheticTools-v0", {}, task_id, seed=5)
            for action in actions:
                message = parse_tool_calls(action)
                if message.calls:
                    (call,) = message.calls
                    await first.call_tool(call.name, call.arguments)
                else:
                    await first.call_tool("send_message", {"text": action})
            return (await first.call_tool("score", {})).structuredContent, (await second.call_tool("score", {})).structuredContent
    finally:
        server.close()


def test_sessions_are_isolated() -> None:
    first, second = anyio.run(two_sessions)
    assert first["terminated"] and first["won"] and first["reward"] > 0
    assert not second["terminated"] and second["reward"] == 0 and second["turn"] == 0

"""``MCP-v0``: the suite's demo MCP server with hostile tools added (tests/integrations/mcp_toy_server.py),
played by the oracle and by hostile calls, over stdio and streamable HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("mcp")

import agentgym_suite  # noqa: F401  (registers MCP-v0)
from agentgym_suite.integrations.mcp import McpServerError, ServerAddress
from agentgym_suite.integrations.mcp.env import tool_call_text
from agentgym_suite.integrations.mcp.tasks import load_tasks

SERVER = Path(__file__).with_name("mcp_toy_server.py")
STDIO = f"stdio:{sys.executable} {SERVER}"
TASKS = [
    {"id": "sum", "instruction": "What is 2 + 3? Use the add tool.",
     "expected_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}], "answer": {"contains": "5"},
     "oracle_answer": "2 + 3 = 5."},
    {"id": "notes", "instruction": "Save the note 'milk', then tell me your notes.",
     "expected_calls": [{"name": "save_note", "arguments": {"text": "milk"}}, {"name": "list_notes", "arguments": {}}],
     "verifier": "integrations.mcp_toy_server:mentions_milk", "oracle_answer": "Your notes: milk."},
]


def call(name: str, **arguments) -> str:
    return tool_call_text(name, arguments)


@pytest.fixture(scope="module")
def env():
    made = gym.make("MCP-v0", server=STDIO, tasks=TASKS, call_timeout=1.5)
    yield made
    made.close()


def play_oracle(env) -> dict:
    info: dict = {}
    for _ in range(10):
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle()[0])
        assert info["action_valid"]
        if terminated or truncated:
            return info
    raise AssertionError("the oracle did not finish")


def test_tools_are_the_servers_and_the_oracle_wins_every_task(env) -> None:
    obs, info = env.reset(options={"task_id": "sum"})
    assert obs == TASKS[0]["instruction"]
    tools = {t["function"]["name"]: t["function"] for t in info["tools"]}
    assert {"add", "save_note", "read_note", "delete_note", "list_notes", "fail", "huge", "stall", "die", "garble"} <= set(tools)
    assert tools["add"]["parameters"]["required"] == ["a", "b"] and tools["add"]["description"] == "Add two numbers."
    assert info["mcp_not_carried_over"]
    for task_id in ("sum", "notes"):
        env.reset(options={"task_id": task_id})
        info = play_oracle(env)
        assert info["won"] and info["score"] == 1.0, (task_id, info.get("mcp_checks"))
        assert all(info["mcp_checks"].values()) and info["mcp_tool_errors"] == 0
    tool_messages = [m for m in info["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[-1]["content"]) == {"result": ["milk"]}  # structured content, as the server states it


def test_a_wrong_answer_or_missing_call_loses(env) -> None:
    env.reset(options={"task_id": "sum"})
    _, reward, terminated, _, info = env.step("It is 6.")
    assert terminated and reward == 0.0 and not info["won"]
    assert info["mcp_checks"] == {"expected_calls": False, "answer": False}


def test_hostile_calls_are_invalid_actions_or_error_results_and_the_oracle_still_wins(env) -> None:
    env.reset(options={"task_id": "sum"})
    _, _, _, _, info = env.step(call("no_such_tool"))
    assert not info["action_valid"]
    _, _, _, _, info = env.step(call("add", a="two", b=3))  # breaks the server's schema: refused before the server
    assert not info["action_valid"]
    obs, _, terminated, _, info = env.step(call("fail", reason="because"))
    assert info["action_valid"] and not terminated and info["mcp_tool_errors"] == 1 and "refused: because" in obs
    obs, _, _, _, info = env.step(call("huge", n=200_000))
    assert info["action_valid"] and "truncated" in info["messages"][-1]["content"] and len(obs) < 30_000
    obs, _, _, _, info = env.step(call("garble"))  # a line of garbage on the protocol stream
    assert info["action_valid"] and "garbled" in obs
    env.step("<tool_call>{not json</tool_call>")
    info = play_oracle(env)
    assert info["won"] and info["mcp_tool_errors"] == 1 and info["mcp_timeouts"] == 0


def test_a_server_that_dies_is_a_clear_episode_error_and_the_next_reset_restarts_it(env) -> None:
    env.reset(options={"task_id": "sum"})
    with pytest.raises(McpServerError, match="stopped answering"):
        env.step(call("die"))
    env.reset(options={"task_id": "sum"})
    assert play_oracle(env)["won"]


@pytest.mark.slow
def test_a_hanging_server_times_out_then_counts_as_hung(env) -> None:
    env.reset(options={"task_id": "sum"})
    obs, _, terminated, _, info = env.step(call("stall", seconds=30))
    assert not terminated and info["mcp_timeouts"] == 1 and "timed out" in obs
    with pytest.raises(McpServerError, match="counts as hung"):
        env.step(call("add", a=2, b=3))  # the stalled server answers nothing: the second silence in a row
    env.reset(options={"task_id": "sum"})
    assert play_oracle(env)["won"]


def test_a_server_that_does_not_start_is_a_clear_error() -> None:
    env = gym.make("MCP-v0", server=f"stdio:{sys.executable} -c pass", tasks=TASKS, connect_timeout=5)
    with pytest.raises(McpServerError, match="could not start or reach"):
        env.reset()
    env.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_streamable_http_server_plays_the_same() -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        env = gym.make("MCP-v0", server=f"http://127.0.0.1:{port}/mcp", tasks=TASKS)
        try:
            env.reset(options={"task_id": "notes"})
            assert play_oracle(env)["won"]
        finally:
            env.close()
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.parametrize(("tasks", "message"), [
    ([{"id": "a", "instruction": "x"}], "at least one check"),
    ([{"id": "a", "instruction": "x", "answer": {"equals": "1"}, "reward": 1}], "unknown keys"),
    ([{"id": "a", "instruction": "", "answer": {"equals": "1"}}], "instruction"),
    ([{"id": "a", "instruction": "x", "verifier": "os.system('rm -rf /')"}], "package.module:function"),
    ([{"id": "a", "instruction": "x", "answer": {"equals": "1"}}] * 2, "unique"),
])
def test_bad_task_files_are_refused_with_what_to_fix(tasks, message) -> None:
    with pytest.raises(ValueError, match=message):
        load_tasks(tasks)


def test_a_tasks_file_with_a_broken_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(TASKS[0]) + "\n{oops\n")
    with pytest.raises(ValueError, match="tasks.jsonl:2"):
        load_tasks(path)
    assert [t.id for t in load_tasks(_good(tmp_path))] == ["sum", "notes"]


def _good(tmp_path: Path) -> Path:
    path = tmp_path / "good.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in TASKS) + "\n")
    return path


@pytest.mark.parametrize("server", ["python -m x", "stdio:", "ftp://host/mcp", ""])
def test_a_server_address_says_what_forms_it_takes(server: str) -> None:
    with pytest.raises(ValueError, match="stdio:<command line>"):
        ServerAddress.parse(server)

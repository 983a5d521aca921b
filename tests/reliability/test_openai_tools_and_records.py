"""Tools the model can see, and records that keep what the server said.

Against the strict stub: native ``tool_calls`` go back to the server as ``tool_calls`` with the
server's ids (the OpenAI API rejects anything else); ``--tools-in-prompt`` writes the schemas
into the system prompt and the model's ``<tool_call>`` text is parsed; a server whose prompt
count cannot hold the tools sent gets a warning; every turn keeps the request, ``usage``,
``finish_reason`` and the server's tool calls, and tokens/s comes from ``usage``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.store import read_records
from agentgym_suite.rollout.request_log import REF_KEY, expand_requests

from reliability.fakes import LOOKUP_SCHEMA, TOOLS_ID
from reliability.stub_openai import stub_server

OPTIONS = {"temperature": 0.0, "max_new_tokens": 32}


def test_records_keep_the_servers_answer_and_send_its_tool_call_ids_back(tmp_path: Path) -> None:
    with stub_server(faults={}) as (url, state):
        result = evaluate(TOOLS_ID, f"openai:stub@{url}", out_dir=tmp_path, episodes=3, batch_size=2, progress=False,
                          agent_options=OPTIONS)
    assert state.invalid == [] and all(e.status == 200 for e in state.exchanges)
    records, _ = read_records(tmp_path / "trajectories.jsonl")  # what is on disk, not objects in memory
    assert len(records) == 3 and all(r.won and r.num_turns == 2 for r in records)
    exchanges = state.answered()
    for record in records:
        requests = expand_requests(record.turns)
        for turn, request in zip(record.turns, requests):
            [exchange] = [e for e in exchanges if e.body == request]  # the record holds exactly what was sent
            choice = exchange.answer["choices"][0]
            assert turn.usage == exchange.answer["usage"] and turn.finish_reason == choice["finish_reason"]
            assert turn.tool_calls == choice["message"].get("tool_calls")
            assert turn.completion_tokens == exchange.answer["usage"]["completion_tokens"]
        call_id = record.turns[0].tool_calls[0]["id"]
        assert call_id.startswith("chatcmpl-tool-")  # the server's id, not one the env made up
        follow_up = requests[1]["messages"]
        assert follow_up[-2]["role"] == "assistant" and follow_up[-2]["tool_calls"][0]["id"] == call_id
        assert follow_up[-1] == {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"value": record.task_id.upper()})}
        # the second request refers to the tools and the opening messages by hash instead of repeating them
        stored = record.turns[1].request
        assert stored["tools"] == {REF_KEY: stored["tools"][REF_KEY]} and REF_KEY in stored["messages"][0]
        assert requests[1]["tools"] == [LOOKUP_SCHEMA]
    summary = result.summary
    assert summary["completion_tokens"] == sum(e.answer["usage"]["completion_tokens"] for e in exchanges)
    assert summary["tokens_per_s"] is not None and summary["tokens_per_s"] > 0


def test_tools_in_prompt_writes_the_schemas_into_the_system_prompt(tmp_path: Path) -> None:
    with stub_server(faults={}) as (url, state):
        code = main(["eval", TOOLS_ID, "--agent", f"openai:stub@{url}", "--out", str(tmp_path), "--no-progress",
                     "--episodes", "2", "--temperature", "0", "--tools-in-prompt"])
    assert code == 0 and state.invalid == []
    records, _ = read_records(tmp_path / "trajectories.jsonl")
    assert all(r.won for r in records)  # the env parsed the model's <tool_call> text
    for exchange in state.answered():
        assert "tools" not in exchange.body
        system = exchange.body["messages"][0]
        assert system["role"] == "system" and "<tools>" in system["content"] and '"name": "lookup"' in system["content"]
    follow_up = [e for e in state.answered() if len(e.body["messages"]) > 2][0].body["messages"]
    assert "<tool_call>" in follow_up[-2]["content"] and "tool_calls" not in follow_up[-2]
    assert follow_up[-1]["role"] == "user" and follow_up[-1]["content"].startswith("<tool_response>")
    assert json.loads((tmp_path / "config.json").read_text())["agent_settings"]["tools_in_prompt"] is True


@pytest.mark.parametrize("template_tools", [False, True])
def test_a_prompt_too_short_for_the_tools_is_warned_about(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                          template_tools: bool) -> None:
    caplog.set_level(logging.WARNING, logger="agentgym_suite")
    with stub_server(faults={}, template_tools=template_tools) as (url, _):
        evaluate(TOOLS_ID, f"openai:stub@{url}", out_dir=tmp_path, episodes=2, progress=False, agent_options=OPTIONS)
    warned = [r.getMessage() for r in caplog.records if "too few for the 1 tool schemas" in r.getMessage()]
    if template_tools:
        assert warned == []  # the server's prompt held the tools: nothing to say
    else:
        assert len(warned) == 1 and "--tools-in-prompt" in warned[0]  # once, not per request

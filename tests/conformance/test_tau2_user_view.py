"""τ²-bench's LLM customer reads the conversation as upstream's user simulator sends it to its model.

``tau2/user_view.json`` holds, for scripted conversations (telecom with the customer's phone tools:
single and parallel calls, text beside calls, an unknown tool, wrong argument types, a broken
``set_apn_settings`` and the calls after it, non-ASCII text; airline without customer tools; mock
with a pre-filled history), every message list and tool list upstream's ``UserSimulator`` would
send to its model (recorded from sierra-research/tau2-bench by ``tau2/regenerate_user_view.py``,
no model called). Here the same scripts play through ``Tau2Env`` with an LLM customer whose model
is the script, and each model call must get exactly upstream's messages and tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.envs.tau2 import Tau2Env
from agentgym_suite.envs.tau2.tool_source import sources_missing

CASES = json.loads((Path(__file__).parent / "tau2" / "user_view.json").read_text(encoding="utf-8"))
PYDANTIC_LINK = re.compile(r"errors\.pydantic\.dev/\d+\.\d+/")

pytestmark = pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found; set AGENTGYM_DATA")


def _same_release(value: Any) -> Any:
    """Pydantic's messages name its release in their links (recorded with 2.14); compare without it."""
    return json.loads(PYDANTIC_LINK.sub("errors.pydantic.dev/X/", json.dumps(value, ensure_ascii=False)))


def _interface(tools: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """What a tool list offers: each tool's parameter names and required ones. Without upstream's tool sources in the
    data folder the descriptions and the JSON-schema wording are the suite's own (a named departure, see
    ``tau2/README.md``), so only this much is compared; with them the lists must be equal."""
    if tools is None:
        return None
    return {t["function"]["name"]: (sorted((t["function"].get("parameters") or {}).get("properties") or {}),
                                    sorted((t["function"].get("parameters") or {}).get("required") or []))
            for t in tools}


def _reply_text(reply: dict[str, Any]) -> str:
    """A scripted customer message as a model writes it here: its text, then one ``<tool_call>`` block per call."""
    blocks = [f"<tool_call>\n{json.dumps({'name': c['name'], 'arguments': c['arguments']}, ensure_ascii=False)}\n</tool_call>"
              for c in reply["tool_calls"]]
    return "\n".join([reply["content"] or "", *blocks]).strip()


class ScriptedModel:
    """The customer's model: answers with the conversation's script and keeps every request."""

    def __init__(self, conversation: dict[str, Any]) -> None:
        self.answers = [reply for turn in conversation["turns"] for reply in turn["user"]]
        self.requests: list[dict[str, Any]] = []

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        self.requests.append({"messages": json.loads(json.dumps(messages)), "tools": tools})
        return _reply_text(self.answers[len(self.requests) - 1])


@pytest.mark.parametrize("conversation", CASES["conversations"], ids=lambda c: c["name"])
def test_the_customer_model_gets_upstreams_messages(conversation: dict[str, Any]) -> None:
    model = ScriptedModel(conversation)
    env = Tau2Env(domain=conversation["domain"], user_generate=model)
    env.reset(options={"task_id": conversation["task_id"]})
    for turn in conversation["turns"][1:]:
        _, _, done, _, _ = env.step(turn["agent"])
    assert done == any("###STOP###" in str(r["content"]) for r in conversation["turns"][-1]["user"])
    expected = conversation["model_calls"]
    assert len(model.requests) == len(expected)
    exact_tools = not sources_missing(env.data.folder)
    for number, (got, want) in enumerate(zip(model.requests, expected)):
        assert _same_release(got["messages"]) == _same_release(want["messages"]), f"model call {number}"
        assert _interface(got["tools"]) == _interface(conversation["tools"]), f"model call {number}: tools"
        if exact_tools:
            assert got["tools"] == conversation["tools"], f"model call {number}: tools as upstream's sources build them"


def test_the_cases_cover_what_they_claim() -> None:
    """The recorded calls hold customer tool calls, parallel calls, text beside calls and error results."""
    last = [c["model_calls"][-1]["messages"] for c in CASES["conversations"]]
    messages = [m for conversation in last for m in conversation]
    calls = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert any(len(m["tool_calls"]) > 1 for m in calls) and any(m["content"] for m in calls)
    assert any(m["role"] == "tool" and str(m["content"]).startswith("Error:") for m in messages)
    assert any(c["tools"] is None for c in CASES["conversations"]) and any(c["tools"] for c in CASES["conversations"])

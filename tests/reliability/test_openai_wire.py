"""What goes over the wire is a valid chat-completions request, whatever the conversation holds."""

from __future__ import annotations

import json

from agentgym_suite.llm.openai_wire import TokenEstimate, context_overflow, tools_unseen, wire_messages

from reliability.fakes import LOOKUP_SCHEMA
from reliability.openai_schema import chat_request_problems

TEXT_CALLS = ('Let me check.\n<tool_call>\n{"name": "lookup", "arguments": {"key": "a"}}\n</tool_call>\n'
              '<tool_call>\n{"name": "lookup", "arguments": not json}\n</tool_call>')
# what a tool env's info["messages"] holds after that reply: the malformed call's result carries an id
# no call has, and the env names each tool result
CONVERSATION = [
    {"role": "system", "content": "You look things up."},
    {"role": "user", "content": "Please look up a."},
    {"role": "assistant", "content": TEXT_CALLS},
    {"role": "tool", "tool_call_id": "error_0", "name": "invalid_tool_call", "content": '{"error_tool_call": {}}'},
    {"role": "tool", "tool_call_id": "call_0", "name": "lookup", "content": '{"value": "A"}'},
    {"role": "user", "content": "Thanks. Anything else?"},
]


def _request(messages: list, tools: list | None = None) -> dict:
    body = {"model": "m", "messages": messages, "max_tokens": 8}
    if tools:
        body["tools"] = tools
    return body


def test_text_tool_calls_go_out_as_tool_calls_and_stray_results_as_user_text() -> None:
    assert chat_request_problems(_request(CONVERSATION, [LOOKUP_SCHEMA]))  # as the env keeps it, the API refuses it
    sent = wire_messages(CONVERSATION, [LOOKUP_SCHEMA])
    assert chat_request_problems(_request(sent, [LOOKUP_SCHEMA])) == []
    assistant, answer, stray, user = sent[2:]
    assert assistant["content"] == "Let me check." and [c["id"] for c in assistant["tool_calls"]] == ["call_0"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"key": "a"}
    assert answer == {"role": "tool", "tool_call_id": "call_0", "content": '{"value": "A"}'}
    assert stray["role"] == "user" and stray["content"].startswith("<tool_response>")
    assert user == CONVERSATION[-1]


def test_tools_in_prompt_is_a_plain_hermes_conversation() -> None:
    sent = wire_messages(CONVERSATION, [LOOKUP_SCHEMA], tools_in_prompt=True)
    assert chat_request_problems(_request(sent)) == []
    assert all(set(m) == {"role", "content"} for m in sent)
    assert "<tools>" in sent[0]["content"] and json.dumps(LOOKUP_SCHEMA) in sent[0]["content"]
    assert sent[2]["content"] == TEXT_CALLS  # the model's own text goes back as it wrote it
    assert sent[3]["role"] == "user" and sent[3]["content"].count("<tool_response>") == 2  # both results, one turn
    server_calls = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "x1", "type": "function", "function": {"name": "lookup", "arguments": '{"key": "b"}'}}]},
        {"role": "tool", "tool_call_id": "x1", "content": "B"}]
    hermes = wire_messages(CONVERSATION[:2] + server_calls, [LOOKUP_SCHEMA], tools_in_prompt=True)
    assert hermes[2]["content"] == '<tool_call>\n{"name": "lookup", "arguments": {"key": "b"}}\n</tool_call>'


def test_context_errors_of_vllm_and_openai_are_read() -> None:
    vllm = ("This model's maximum context length is 2048 tokens. However, your prompt contains 2210 input tokens, "
            "which exceeds this limit even without any output tokens.")
    assert context_overflow(vllm) == (2048, 2210)
    assert context_overflow("Input length (3000) exceeds model's maximum context length (2048).") == (2048, 3000)
    openai = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens."
    assert context_overflow(openai) == (128000, 130001)
    assert context_overflow("the model `x` does not exist") is None


def test_token_estimate_calibrates_and_the_tools_check_has_no_false_alarm() -> None:
    messages = [{"role": "user", "content": "x" * 400}]
    estimate = TokenEstimate()
    first = estimate.count(messages, None)
    assert first >= 400 / 3  # before any usage: on the safe side
    estimate.observe(400, 100 + 6, 1)  # the server said: 4 characters a token
    assert 100 <= estimate.count(messages, None) < first
    tools = [LOOKUP_SCHEMA] * 4
    chars = sum(len(m["content"]) for m in messages) + len(json.dumps(tools))
    assert tools_unseen(104, messages, tools)  # 400 characters of text alone take ~100 tokens: tools missing
    assert not tools_unseen(chars // 4, messages, tools)  # text and tools at 4 characters a token
    assert not tools_unseen(10, messages, None)

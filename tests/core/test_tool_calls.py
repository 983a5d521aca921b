"""Property-based fuzzing of ``parse_tool_calls``: malformed input never raises and invariants hold."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agentgym_suite.core.tool_calls import INVALID_TOOL_CALL_FORMAT, ParsedMessage, ToolCall, parse_tool_calls

FRAGMENTS = st.sampled_from([
    "<tool_call>", "</tool_call>", "{", "}", "[", "]", '"name"', '"arguments"', ":", ",", '"x"', "null", "1",
    '"tool_calls"', '"function"', "\n", " ", "\\", '"', "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)


def _check(parsed: ParsedMessage) -> None:
    assert isinstance(parsed, ParsedMessage)
    assert isinstance(parsed.content, str)
    assert "<tool_call>" not in parsed.content and "</tool_call>" not in parsed.content
    for call in parsed.calls:
        assert isinstance(call, ToolCall) and isinstance(call.name, str) and call.name == call.name.strip() and call.name
        assert isinstance(call.arguments, dict)
        json.dumps(call.to_openai())  # every accepted call can be serialised back
    for error in parsed.errors:
        assert error.code and error.message
    assert parsed.has_tool_calls == bool(parsed.calls or parsed.errors)


@settings(max_examples=900, deadline=None)
@given(st.lists(FRAGMENTS | st.text(max_size=8), max_size=30).map("".join))
def test_fragment_soup_never_raises(text: str) -> None:
    _check(parse_tool_calls(text))


@settings(max_examples=600, deadline=None)
@given(JSON_VALUES)
def test_any_json_inside_a_block_never_raises(value: object) -> None:
    parsed = parse_tool_calls(f"<tool_call>{json.dumps(value)}</tool_call>")
    _check(parsed)
    assert len(parsed.calls) + len(parsed.errors) >= 1
    named = isinstance(value, dict) and (isinstance(value.get("name"), str) and value["name"].strip() or "function" in value)
    if not named:
        assert not parsed.calls and parsed.errors[0].code == INVALID_TOOL_CALL_FORMAT


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4), st.one_of(st.none(), st.text(max_size=10)))
def test_openai_shaped_messages_never_raise(extra: dict, content: object) -> None:
    message = {"content": content, "tool_calls": [extra, {"function": extra}, {"function": {"name": "f", "arguments": json.dumps(extra)}}]}
    _check(parse_tool_calls(json.dumps(message)))
    _check(parse_tool_calls(message))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(lambda s: s.strip()),
       st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3), st.text(max_size=20))
def test_well_formed_calls_round_trip(name: str, arguments: dict, prose: str) -> None:
    prose = prose.replace("<tool_call>", "").replace("</tool_call>", "")
    body = json.dumps({"name": name, "arguments": arguments})
    parsed = parse_tool_calls(f"{prose}<tool_call>\n{body}\n</tool_call>")
    _check(parsed)
    assert not parsed.errors
    assert [(c.name, c.arguments) for c in parsed.calls] == [(name.strip(), arguments)]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.none(), st.lists(st.integers(), max_size=3), st.binary(max_size=10)))
def test_non_text_messages_are_errors_not_exceptions(value: object) -> None:
    parsed = parse_tool_calls(value)
    _check(parsed)

"""Property-based fuzzing of ``parse_tool_calls``: malformed input never raises and invariants hold."""

from __future__ import annotations

import json
import sys

import pytest
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


# ---------------------------------------------------------------------------- parser limits
DIGIT_LIMIT = sys.get_int_max_str_digits()
HUGE = "7" * (DIGIT_LIMIT + 700)


def _huge_number_messages(name: str = "f") -> dict[str, object]:
    """The same call with an integer over Python's conversion limit, in every shape a message takes."""
    args_text = '{"n": ' + HUGE + "}"
    return {
        "tool_call block": f'<tool_call>{{"name": "{name}", "arguments": {args_text}}}</tool_call>',
        "JSON-string arguments": "<tool_call>" + json.dumps({"name": name, "arguments": args_text}) + "</tool_call>",
        "OpenAI tool_calls, string arguments": json.dumps(
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": name, "arguments": args_text}}]}),
        "OpenAI tool_calls, object arguments":
            '{"content": "", "tool_calls": [{"id": "c1", "function": {"name": "' + name + '", "arguments": ' + args_text + "}}]}",
        "dict message": {"content": "", "tool_calls": [{"function": {"name": name, "arguments": {"n": int("7" * (DIGIT_LIMIT - 1)) * 10**800}}}]},
    }


@pytest.mark.parametrize("shape", list(_huge_number_messages()))
def test_numbers_over_the_conversion_limit_are_errors_not_exceptions(shape: str) -> None:
    parsed = parse_tool_calls(_huge_number_messages()[shape])
    _check(parsed)
    assert not parsed.calls and parsed.errors
    assert all(e.code == INVALID_TOOL_CALL_FORMAT for e in parsed.errors)
    assert any(f"more than {DIGIT_LIMIT} digits" in e.message or "Exceeds the limit" in e.message for e in parsed.errors)


def test_numbers_at_the_conversion_limit_are_accepted() -> None:
    number = "9" * DIGIT_LIMIT
    parsed = parse_tool_calls(f'<tool_call>{{"name": "f", "arguments": {{"n": {number}, "x": -{number}}}}}</tool_call>')
    assert not parsed.errors and parsed.calls[0].arguments["n"] == int(number)


def test_long_fractions_and_exponents_are_ordinary_floats() -> None:
    parsed = parse_tool_calls('<tool_call>{"name": "f", "arguments": {"x": 0.' + "3" * 20_000 + ', "y": 1e400}}</tool_call>')
    assert not parsed.errors and parsed.calls[0].arguments["y"] == float("inf")


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "f", "arguments": {"city": "Par\\ud800is"}}</tool_call>',
    '<tool_call>{"name": "f", "arguments": "{\\"city\\": \\"\\\\udfff\\"}"}</tool_call>',
    '<tool_call>{"name": "f", "arguments": {"\\ud800": 1}}</tool_call>',
    '{"content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"x": ["\\udc00"]}}}]}',
])
def test_lone_surrogates_decoded_from_escapes_are_errors(text: str) -> None:
    parsed = parse_tool_calls(text)
    _check(parsed)
    assert not parsed.calls and "lone surrogate" in parsed.errors[0].message


def test_escaped_surrogate_pairs_are_ordinary_characters() -> None:
    parsed = parse_tool_calls('<tool_call>{"name": "f", "arguments": {"emoji": "\\ud83d\\ude00"}}</tool_call>')
    assert not parsed.errors and parsed.calls[0].arguments == {"emoji": "\U0001F600"}

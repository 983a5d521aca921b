"""The strict <execution_result> parser accepts the contract and nothing else (property-based)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agentgym_suite.methods.envace.contract import (
    INVALID_SIMULATOR_OUTPUT,
    ends_episode,
    format_execution_result,
    parse_execution_result,
)

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=12)
containers = st.one_of(st.lists(json_values, min_size=1, max_size=4), st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=4))
thinking = st.none() | st.text(max_size=40).filter(lambda t: "<" not in t and ">" not in t)


def _rejected(text: str) -> bool:
    parsed = parse_execution_result(text)
    return not parsed.valid and parsed.result["error_tool_call"]["code"] == INVALID_SIMULATOR_OUTPUT


@settings(max_examples=200, deadline=None)
@given(containers, thinking)
def test_contract_round_trips(value: object, think: str | None) -> None:
    parsed = parse_execution_result(format_execution_result(value, think))
    assert parsed.valid and parsed.result == value
    assert parsed.thinking == (think.strip() if think is not None else None)


@settings(max_examples=200, deadline=None)
@given(containers, st.text(min_size=1, max_size=20).filter(lambda t: t.strip()))
def test_text_outside_the_block_is_rejected(value: object, junk: str) -> None:
    good = format_execution_result(value)
    assert _rejected(junk + good) or junk.strip().startswith("<think>")
    assert _rejected(good + junk)


@settings(max_examples=200, deadline=None)
@given(scalars)
def test_scalars_and_empty_containers_are_rejected(value: object) -> None:
    assert _rejected("<execution_result>\n" + json.dumps(value) + "\n</execution_result>")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_parses_only_when_it_is_the_contract(text: str) -> None:
    parsed = parse_execution_result(text)
    if parsed.valid:
        body = text[text.index("<execution_result>\n") + len("<execution_result>\n"): text.rindex("\n</execution_result>")]
        assert json.loads(body) == parsed.result and parsed.result
        assert text.rstrip().endswith("</execution_result>")


def test_fixed_cases() -> None:
    ok = '<think>plan</think>\n<execution_result>\n{"a": 1}\n</execution_result>\n'
    assert parse_execution_result(ok).result == {"a": 1}
    for bad in [
        '<execution_result>{"a": 1}</execution_result>',  # newlines required
        '<execution_result>\n{}\n</execution_result>',
        '<execution_result>\n[]\n</execution_result>',
        '<execution_result>\n{"a": NaN}\n</execution_result>',
        '<execution_result>\n{"a": 1}\n</execution_result>\n<execution_result>\n{"b": 2}\n</execution_result>',
        '<think>a <execution_result> inside</think><execution_result>\n{"a": 1}\n</execution_result>',
        'Sure! <execution_result>\n{"a": 1}\n</execution_result>',
        '<execution_result>\n{"a": 1}\n',
        None,
    ]:
        assert _rejected(bad), bad
    assert ends_episode(parse_execution_result("nope").result)
    assert not ends_episode({"error": "domain error"})

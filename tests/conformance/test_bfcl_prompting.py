"""BFCL's prompting decoder: our reading of ``[f(a=1)]`` call lists against bfcl-eval's own.

``bfcl_prompting/decoder_cases.json`` holds what ``default_decode_ast_prompting`` of bfcl-eval
2026.3.23 returned for fixed and random call lists (``regenerate_decoder_cases.py`` wrote it; the
upstream decoder needs tree-sitter, which the suite does not install). Every call upstream decodes
to values JSON can carry must come out as the same call here; a call whose values JSON cannot carry
(bytes, complex numbers, non-string dict keys) and a list upstream cannot decode must come out as
an error the agent is shown, never as a scored call and never as an exception.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core.actions import encoding_problem
from agentgym_suite.core.tool_calls import INVALID_PARAMETERS, ToolCall, ToolCallError
from agentgym_suite.envs.bfcl.prompting_decoder import decode_call_list

CASES = json.loads((Path(__file__).parent / "bfcl_prompting" / "decoder_cases.json").read_text(encoding="utf-8"))


class NoJSON(Exception):
    """An upstream value JSON cannot carry."""


def untag(value: Any) -> Any:
    """A tagged upstream value as Python (tuples, bytes, complex numbers and odd dict keys restored)."""
    if isinstance(value, list):
        return [untag(v) for v in value]
    if isinstance(value, dict):
        if "__tuple__" in value:
            return tuple(untag(v) for v in value["__tuple__"])
        if "__bytes__" in value:
            return value["__bytes__"].encode("latin-1")
        if "__complex__" in value:
            return complex(*value["__complex__"])
        return {_hashable(untag(k)): untag(v) for k, v in value["__dict__"]}
    return value


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def as_json(value: Any) -> Any:
    """Upstream's value as the JSON arguments a tool call carries; :class:`NoJSON` when it has none
    (or holds a lone surrogate, which the suite's tool-call parser refuses in any call)."""
    if isinstance(value, str) and encoding_problem(value):  # the suite's limit on every tool call
        raise NoJSON
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NoJSON
        return {k: as_json(v) for k, v in value.items()}
    raise NoJSON


def _same(a: Any, b: Any) -> bool:
    """Equality that also holds for NaN and keeps 1 apart from True."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("case", CASES["cases"], ids=[str(i) for i in range(len(CASES["cases"]))])
def test_decoder_matches_bfcl_eval(case: dict[str, Any]) -> None:
    ours = decode_call_list(case["text"])
    if not case["decoded"]:  # upstream fails: a reply in words, or a refused call; never a scored list
        assert ours is None or any(isinstance(c, ToolCallError) for c in ours), (case["text"], ours)
        return
    assert ours is not None and len(ours) == len(case["calls"]), (case["text"], ours)
    for got, tagged in zip(ours, case["calls"]):
        [(name, arguments)] = untag(tagged).items()
        try:
            expected = as_json(arguments)
        except NoJSON:
            assert isinstance(got, ToolCallError) and got.code == INVALID_PARAMETERS and got.message, (case["text"], got)
            continue
        assert isinstance(got, ToolCall), (case["text"], got)
        assert got.name == name and _same(got.arguments, expected), (case["text"], got, expected)


@pytest.mark.parametrize("case", CASES["departures"], ids=[c["text"][:30] for c in CASES["departures"]])
def test_departures_are_the_documented_ones(case: dict[str, Any]) -> None:
    """Each departure differs from upstream in the documented direction (a refusal with a reason, or
    the fenced block read); the upstream record proves upstream does otherwise."""
    ours = decode_call_list(case["text"])
    assert ours, case["text"]
    if case["text"].startswith("```"):
        assert not case["decoded"] and ours == [ToolCall("f", {"a": 1}, id="call_0")]
    elif case["text"] == "[f(a=+5)]":
        assert untag(case["calls"][0]) == {"f": {"a": -5}} and ours == [ToolCall("f", {"a": 5}, id="call_0")]
    else:
        assert case["decoded"]
        assert all(isinstance(c, ToolCallError) and c.message for c in ours), ours

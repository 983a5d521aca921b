"""BFCL's prompting decoder: the env's reading of ``[f(a=1)]`` call lists against bfcl-eval's own.

``bfcl_prompting/decoder_cases.json`` holds what ``default_decode_ast_prompting`` of bfcl-eval
2026.3.23 returned for fixed and random call lists (``regenerate_decoder_cases.py`` wrote it). The
env decodes with that same function (:mod:`agentgym_suite.envs.bfcl.upstream_decode`), so its
output must equal the record exactly, tuples, quirks (``+5`` read as ``-5``, ``not`` as a minus)
and failures included (a fenced block tagged ``python`` fails). The one exception is a reply
holding arithmetic or a lambda, which bfcl-eval evaluates with ``eval``: the guard reads it with the
suite's bounded evaluator instead, which must give upstream's values on literal arithmetic and a
refusal the agent is shown otherwise. Calls are then carried as JSON; a value JSON cannot carry
must become an error the agent is shown, never a scored call and never an exception.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core.actions import encoding_problem
from agentgym_suite.core.tool_calls import INVALID_PARAMETERS, ToolCall, ToolCallError
from agentgym_suite.envs.bfcl.upstream_decode import decode_prompting_reply, needs_eval

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


ALL = CASES["cases"] + CASES["departures"]


@pytest.mark.parametrize("case", ALL, ids=[str(i) for i in range(len(ALL))])
def test_decoder_matches_bfcl_eval(case: dict[str, Any]) -> None:
    decoded = decode_prompting_reply(case["text"])
    if needs_eval(case["text"]):  # the guard's own evaluator: upstream's values, or a refusal
        _check_guarded(case, decoded)
        return
    if not case["decoded"] or not case["calls"]:  # upstream fails, or decodes no call: a reply in words
        assert decoded is None, (case["text"], decoded)
        return
    assert decoded is not None and decoded.output is not None, case["text"]
    assert [tag(call) for call in decoded.output] == case["calls"], case["text"]
    for got, tagged in zip(decoded.calls, case["calls"]):
        [(name, arguments)] = untag(tagged).items()
        try:
            expected = as_json(arguments)
        except NoJSON:
            assert isinstance(got, ToolCallError) and got.code == INVALID_PARAMETERS and got.message, (case["text"], got)
            continue
        assert isinstance(got, ToolCall), (case["text"], got)
        assert got.name == name and _same(got.arguments, expected), (case["text"], got, expected)


def _check_guarded(case: dict[str, Any], decoded: Any) -> None:
    if not case["decoded"]:
        assert decoded is None or any(isinstance(c, ToolCallError) for c in decoded.calls), case["text"]
        return
    assert decoded is not None and decoded.output is None and len(decoded.calls) == len(case["calls"]), case["text"]
    for got, tagged in zip(decoded.calls, case["calls"]):
        [(name, arguments)] = untag(tagged).items()
        if isinstance(got, ToolCallError):  # refused: arithmetic on a name or call, or a value JSON lacks
            assert got.message, case["text"]
            continue
        assert got.name == name and _same(got.arguments, as_json(arguments)), (case["text"], got, arguments)


def test_the_guard_keeps_eval_away_and_says_so() -> None:
    """Arithmetic on a call is refused with a reason (bfcl-eval would run it with eval)."""
    decoded = decode_prompting_reply("[f(a=len('ab') + 1)]")
    assert decoded is not None and decoded.output is None
    [error] = decoded.calls
    assert isinstance(error, ToolCallError) and "f" in error.message


def tag(value: Any) -> Any:
    """``value`` tagged as ``regenerate_decoder_cases.py`` tags upstream's output."""
    if isinstance(value, tuple):
        return {"__tuple__": [tag(v) for v in value]}
    if isinstance(value, list):
        return [tag(v) for v in value]
    if isinstance(value, bytes):
        return {"__bytes__": value.decode("latin-1")}
    if isinstance(value, complex):
        return {"__complex__": [value.real, value.imag]}
    if isinstance(value, dict):
        return {"__dict__": [[tag(k), tag(v)] for k, v in value.items()]}
    return value


RELEVANCE_REPLIES = ["[{name}(x=1)]", "[{name}(**{{'a': 1}})]", "[{name}(x=1j)]", "[{name}(x=b'a')]", "[{name}()()]",
                     "[{name}(x=(1, 2))]", "```\n[{name}(x=1)]\n```", "[]", "I cannot help with that.", "[{name}(1)]"]
"""Prompting replies for the relevance categories: a call, calls the suite cannot carry as JSON (shown to the
agent as errors) but bfcl-eval decodes, a code fence, an empty list, words, a positional argument."""


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance", "live_relevance"])
def test_relevance_verdicts_in_prompting_style_are_bfcl_evals(category: str) -> None:
    """bfcl-eval's relevance rule (``_evaluate_single_relevance_entry`` as a prompting model, ``QwenHandler``)
    counts every call its decoder returns; the env's verdict must be the same on every reply."""
    pytest.importorskip("bfcl_eval")
    from bfcl_eval.model_handler.local_inference.qwen import QwenHandler

    from agentgym_suite.envs.bfcl import BFCLEnv, data, upstream

    runner, _ = upstream.import_with_model_table("bfcl_eval.eval_checker.eval_runner")  # its model table needs every provider
    _evaluate_single_relevance_entry = runner._evaluate_single_relevance_entry

    env = BFCLEnv(category=category, system_prompt="prompting")
    handler = object.__new__(QwenHandler)  # its decode_ast is the prompting decoder; nothing else is used
    verdicts = set()
    for task_id in env.task_ids()[:2]:
        name = data.load_questions(category)[task_id]["function"][0]["name"]
        for template in RELEVANCE_REPLIES:
            reply = template.format(name=name)
            upstream = _evaluate_single_relevance_entry(handler, task_id, reply, {}, "Qwen/Qwen3-8B",
                                                        data.UPSTREAM_NAMES[category])["valid"]
            env.reset(options={"task_id": task_id})
            _, _, terminated, _, info = env.step(reply)
            assert terminated and info["won"] == upstream, (category, reply, info.get("bfcl_check"))
            verdicts.add(upstream)
    assert verdicts == {True, False}

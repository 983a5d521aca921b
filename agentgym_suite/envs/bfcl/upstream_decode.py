"""Prompting-style replies decoded by bfcl-eval's own decoders, with a guard in front.

bfcl-eval reads a prompting model's reply with ``default_decode_ast_prompting``
(``model_handler/utils.py``): Python call lists through ``ast`` and its own value rules, Java and
JavaScript through its tree-sitter parsers (``model_handler/parser/``), every argument value of
those two kept as source text for the checker's type converters. This module calls that decoder
itself, so a reply in a code fence, a tuple, a positional argument, an escaped quote, ``5L``,
``Enum.VALUE`` or a Python keyword as a parameter name decodes here exactly as on the
leaderboard, and the single-turn checker receives the decoder's output unchanged
(:attr:`UpstreamDecode.output`).

The guard in front keeps model output away from ``eval``: bfcl-eval's Python decoder evaluates
arithmetic (``ast.BinOp``) and lambdas with ``eval``. A Python reply holding either is decoded by
the suite's own decoder instead (:mod:`.prompting_decoder`: arithmetic on literals computed by a
bounded evaluator, anything else refused), the one named departure
(:data:`~agentgym_suite.envs.bfcl.env.PYTHON_DECODE_DEPARTURE`). Replies longer than
:data:`~agentgym_suite.envs.bfcl.prompting_decoder.MAX_CALL_LIST_CHARS` are read as text. A
decoder exception, or output that is not a list of ``{name: {arguments}}``, means the reply is
not a call list: bfcl-eval then fails a single-turn entry (``ast_decoder:decoder_failed``) and
takes a multi-turn reply as the model's words, and so does the env.

Decoded calls become :class:`~agentgym_suite.core.tool_calls.ToolCall` objects with JSON
arguments (tuples as lists) for execution and the transcript; a value JSON cannot carry (bytes,
a complex number, a dict key that is not a string, a lone surrogate) makes that call a
:class:`~agentgym_suite.core.tool_calls.ToolCallError` the agent is shown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from agentgym_suite.core.actions import encoding_problem
from agentgym_suite.core.tool_calls import (
    INVALID_PARAMETERS,
    INVALID_TOOL_CALL_FORMAT,
    ToolCall,
    ToolCallError,
    limit_problem,
)
from agentgym_suite.envs.bfcl.prompting_decoder import MAX_CALL_LIST_CHARS, DecodedCall, decode_call_list

_EVALUATED = (ast.BinOp, ast.Lambda)
"""Nodes bfcl-eval's Python decoder hands to ``eval``."""


@dataclass
class UpstreamDecode:
    """One prompting reply as bfcl-eval's decoder read it."""

    calls: list[DecodedCall] = field(default_factory=list)
    """The calls for the conversation: a :class:`ToolCall` or a :class:`ToolCallError` each."""
    output: list[dict[str, Any]] | None = None
    """bfcl-eval's decoded output (``[{name: {argument: value}}]``, tuples and source texts kept),
    what its AST checker receives; None when the guard's own decoder read the reply."""


def _return_format(language: str) -> Any:
    from bfcl_eval.constants.enums import ReturnFormat

    return {"python": ReturnFormat.PYTHON, "java": ReturnFormat.JAVA, "javascript": ReturnFormat.JAVASCRIPT}[language]


def needs_eval(text: str) -> bool:
    """True when bfcl-eval's Python decoder would ``eval`` part of ``text`` (arithmetic or a lambda)."""
    body = text.strip("`\n ")
    body = body if body.startswith("[") else "[" + body
    body = body if body.endswith("]") else body + "]"
    try:
        tree = ast.parse(body.strip().strip("'"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False  # bfcl-eval's own parse fails the same way, before any eval
    return any(isinstance(node, _EVALUATED) for node in ast.walk(tree))


def decode_prompting_reply(text: Any, language: str = "python") -> UpstreamDecode | None:
    """The calls of a prompting reply, decoded by bfcl-eval for ``language`` (python, java, javascript).

    Returns None when the reply is not a call list (bfcl-eval's decoder raises or returns another
    shape), an :class:`UpstreamDecode` otherwise. Never raises and never evaluates model output.
    """
    if not isinstance(text, str) or len(text) > MAX_CALL_LIST_CHARS:
        return None
    if language == "python" and needs_eval(text):
        own = decode_call_list(text)
        return UpstreamDecode(calls=own) if own else None
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_function_calling_format_output

    try:
        output = default_decode_ast_prompting(text, _return_format(language))
        if not output or not is_function_calling_format_output(output):
            return None
    except Exception:  # noqa: BLE001 - any decoder failure is bfcl-eval's decoder_failed
        return None
    return UpstreamDecode(calls=[_as_call(item, index) for index, item in enumerate(output)], output=output)


def _as_call(item: dict[str, Any], index: int) -> DecodedCall:
    [(name, arguments)] = item.items()
    if not isinstance(name, str) or not name:  # e.g. ``f()()``: bfcl-eval names the call ""
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "the function must be a name such as f or a.b.f", repr(item)[:500])
    try:
        if not all(isinstance(k, str) for k in arguments):  # ``**{...}``: bfcl-eval keeps it under the key None
            raise _NoJSON("**arguments have no parameter name; name every argument, as in f(x=1)")
        converted = {k: _json(v) for k, v in arguments.items()}
    except _NoJSON as exc:
        return ToolCallError(INVALID_PARAMETERS, f"{name}: {exc}", repr(item)[:500], str(name))
    problem = limit_problem(converted)
    if problem:
        return ToolCallError(INVALID_PARAMETERS, f"{name}: the arguments are refused: {problem}", repr(item)[:500], name)
    return ToolCall(name=str(name), arguments=converted, id=f"call_{index}")


class _NoJSON(ValueError):
    """A decoded value a tool call cannot carry."""


def _json(value: Any) -> Any:
    if isinstance(value, str):
        if encoding_problem(value):
            raise _NoJSON("a string argument holds characters that cannot be encoded (a lone surrogate)")
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _NoJSON("a dict argument has a key that is not a string; BFCL parameters take string keys")
        return {k: _json(v) for k, v in value.items()}
    raise _NoJSON(f"a {type(value).__name__} argument matches no BFCL parameter type")

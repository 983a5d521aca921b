"""The guard's own reading of a python call list ``[f(a=1), g.h(b="x")]``, for replies bfcl-eval would ``eval``.

The env decodes prompting replies with bfcl-eval's own decoder (:mod:`.upstream_decode`); only a
reply holding arithmetic or a lambda, which that decoder evaluates with ``eval``, is read by this
module instead. It follows the value rules of bfcl-eval's ``default_decode_ast_prompting``
(``model_handler/utils.py``), as far as they go without ``eval``: the text, stripped of backticks, newlines and spaces and put in brackets when it has none, must
parse as a Python list of calls; each keyword argument is read from its syntax node:

* literals as they are (``...`` reads as the string ``"..."``), a negative number, lists,
  tuples and dicts of such values;
* a bare name as its own text (``unit=celsius`` is ``"celsius"``), a call without keyword
  arguments and a subscript as their source text, a call with keyword arguments as
  ``{name: {keyword: value}}``.

Anything else (a set, an f-string, a comprehension, a lambda, a comparison...) fails the decode.
bfcl-eval computes arithmetic (``2*3``) with ``eval``; model output never reaches ``eval`` here:
arithmetic on literal numbers, strings, lists and tuples is computed by a small evaluator with size
bounds, and arithmetic on anything else is refused. Two more departures, both refusals that
upstream answers with a call missing its arguments: positional and ``**`` arguments are refused,
where upstream drops them without a word. A text longer than :data:`MAX_CALL_LIST_CHARS` is read
as a reply in words, not parsed. ``tests/conformance/test_bfcl_prompting.py`` replays upstream's
own decodes of fixed and random call lists (literal arithmetic among them) through the env's decoder.

A decoded call becomes a :class:`~agentgym_suite.core.tool_calls.ToolCall` with JSON arguments
(tuples become lists). A value the decoder reads but JSON cannot carry (bytes, a complex number,
a dict key that is not a string) matches no BFCL parameter type, so upstream's checker would fail
the call: here the call is a :class:`~agentgym_suite.core.tool_calls.ToolCallError` saying why.
So is a call that fails the decode; the rest of the list is still read. The caller shows every
error to the agent and marks the action invalid.
"""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable

from agentgym_suite.core.tool_calls import (
    INVALID_PARAMETERS,
    INVALID_TOOL_CALL_FORMAT,
    ToolCall,
    ToolCallError,
    limit_problem,
)

MAX_CALL_LIST_CHARS = 20_000
"""Longest text read as a call list; longer replies are taken as plain text."""
MAX_INT_BITS = 14_000
"""Largest integer an argument may hold (about 4,200 digits, under Python's str conversion limit)."""
MAX_POWER = 128
"""Largest integer exponent the arithmetic evaluator computes."""

DecodedCall = ToolCall | ToolCallError


class Refused(ValueError):
    """A value the decoder does not read; the message says why and what to write instead."""

    def __init__(self, message: str, code: str = INVALID_TOOL_CALL_FORMAT) -> None:
        super().__init__(message)
        self.code = code


def decode_call_list(text: Any) -> list[DecodedCall] | None:
    """The calls of a prompting answer, one :class:`ToolCall` or :class:`ToolCallError` each, in order.

    Returns None when ``text`` is not a list of calls (it is then the model's reply in words, as
    bfcl-eval's multi-turn loop takes an answer it cannot decode), and ``[]`` for an empty list.
    Never raises and never evaluates the text.
    """
    if not isinstance(text, str):
        return None
    body = text.strip()
    if body.startswith("```"):  # a fenced block: upstream's strip leaves "python" in front
        body = body.strip("`").removeprefix("python")
    body = body.strip("`\n ")
    if len(body) > MAX_CALL_LIST_CHARS:
        return None
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body = body + "]"
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    if not isinstance(tree.body, ast.List) or not all(isinstance(e, ast.Call) for e in tree.body.elts):
        return None
    return [_decode_call(node, body, index) for index, node in enumerate(tree.body.elts)]  # type: ignore[arg-type]


def _decode_call(node: ast.Call, source: str, index: int) -> DecodedCall:
    raw = (ast.get_source_segment(source, node) or "")[:500]
    name = callee_name(node.func)
    if name is None:
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "the function must be a name such as f or a.b.f", raw)
    try:
        if node.args:
            raise Refused("positional arguments are not read: name every argument, as in f(x=1)")
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Refused("**arguments are not read: name every argument, as in f(x=1)")
            arguments[keyword.arg] = _json_value(resolve(keyword.value), keyword.arg)
    except Refused as exc:
        return ToolCallError(exc.code, f"{name}: {exc}", raw, name)
    except RecursionError:
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, f"{name}: the arguments are nested too deeply", raw, name)
    problem = limit_problem(arguments)
    if problem:
        return ToolCallError(INVALID_PARAMETERS, f"{name}: the arguments are refused: {problem}", raw, name)
    return ToolCall(name=name, arguments=arguments, id=f"call_{index}")


def callee_name(node: ast.expr) -> str | None:
    """``f`` or a dotted ``a.b.f`` (BFCL's live functions have dotted names); None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# ---------------------------------------------------------------------------- syntax node -> value
def resolve(node: ast.expr) -> Any:
    """The value bfcl-eval's decoder reads from one argument node (see the module docstring).

    Raises:
        Refused: for a node the decoder does not read.
    """
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.List):
        return [resolve(item) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(resolve(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        return _resolve_dict(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return ast.unparse(node)
    if isinstance(node, ast.Call):
        return _resolve_nested_call(node)
    if isinstance(node, (ast.UnaryOp, ast.BinOp)):
        return _arithmetic(node)
    raise Refused(_refusal(node))


def _resolve_dict(node: ast.Dict) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key_node, value_node in zip(node.keys, node.values):
        if key_node is None:
            raise Refused("** inside a dict is not read; write every key")
        key, value = resolve(key_node), resolve(value_node)
        try:
            result[key] = value
        except TypeError:  # an unhashable key such as a list
            raise Refused(f"a dict key must be a string, not a {type(key).__name__}", INVALID_PARAMETERS) from None
    return result


def _resolve_nested_call(node: ast.Call) -> Any:
    """A call inside an argument: its source text, or ``{name: {keyword: value}}`` when it has keywords."""
    if not node.keywords:
        return ast.unparse(node)
    name = callee_name(node.func)
    if name is None:
        raise Refused("a call inside an argument must name its function, as in g(x=1)")
    inner: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise Refused("**arguments are not read: name every argument, as in f(x=1)")
        inner[keyword.arg] = resolve(keyword.value)
    return {name: inner}


_REFUSED_KINDS: dict[type, str] = {
    ast.Set: "a set ({...}) is not a value BFCL decodes; write a list [...]",
    ast.JoinedStr: "an f-string is not read; write a plain string",
    ast.Lambda: "a lambda is not read; write the value itself",
    ast.Compare: "a comparison is not read; write its value (True or False)",
    ast.BoolOp: "'and'/'or' are not read; write the value itself",
    ast.IfExp: "a conditional expression is not read; write the value itself",
    ast.Starred: "* unpacking is not read; write every item",
}


def _refusal(node: ast.expr) -> str:
    known = _REFUSED_KINDS.get(type(node))
    if known:
        return known
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "a comprehension is not read; write the items themselves"
    return (f"{type(node).__name__} is not a value BFCL decodes; write a literal "
            "(a string, number, True/False/None, a list or a dict)")


# ---------------------------------------------------------------------------- bounded arithmetic
_NUMBER = (int, float, complex)
_SEQUENCE = (str, list, tuple)
_NUMBER_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def _literal(node: ast.expr) -> Any:
    """An operand of arithmetic: literals and arithmetic only (names and calls are text, not numbers)."""
    if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.UnaryOp, ast.BinOp)):
        value = resolve(node)
        if isinstance(value, (*_NUMBER, *_SEQUENCE)):
            return value
    raise Refused("arithmetic is computed only on literal numbers, strings, lists and tuples; write the result")


def _arithmetic(node: ast.UnaryOp | ast.BinOp) -> Any:
    """What bfcl-eval computes with ``eval``, computed here on literals with size bounds."""
    if isinstance(node, ast.UnaryOp):
        value = _literal(node.operand)
        if not isinstance(node.op, (ast.USub, ast.UAdd)) or not isinstance(value, _NUMBER):
            raise Refused("only - and + apply to a number here; write the value itself")
        return -value if isinstance(node.op, ast.USub) else +value
    left, right = _literal(node.left), _literal(node.right)
    op = type(node.op)
    if isinstance(left, _NUMBER) and isinstance(right, _NUMBER) and op in _NUMBER_OPS:
        if op is ast.Pow and isinstance(right, int) and abs(right) > MAX_POWER and abs(left) > 1:
            raise Refused(f"exponents above {MAX_POWER} are not computed; write the result")
        try:
            result = _NUMBER_OPS[op](left, right)
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise Refused(f"the arithmetic fails ({exc}); write the result") from None
        if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
            raise Refused("the number is too large; write a smaller one")
        return result
    if op is ast.Add and isinstance(left, _SEQUENCE) and type(left) is type(right):
        if len(left) + len(right) > MAX_CALL_LIST_CHARS:
            raise Refused("the joined value is too long")
        return left + right
    if op is ast.Mult and {type(left), type(right)} & {str, list, tuple} and int in {type(left), type(right)}:
        sequence, times = (left, right) if type(right) is int else (right, left)
        if len(sequence) * max(times, 0) > MAX_CALL_LIST_CHARS:
            raise Refused("the repeated value is too long")
        return sequence * times
    raise Refused("this arithmetic is not computed; write the result")


# ---------------------------------------------------------------------------- value -> JSON
def _json_value(value: Any, where: str) -> Any:
    """``value`` as JSON data (tuples become lists), or :class:`Refused` for what JSON cannot carry."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise Refused(f"argument {where!r}: the number is too large", INVALID_PARAMETERS)
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(item, where) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Refused(f"argument {where!r}: dict keys must be strings, not {type(key).__name__} "
                              f"({_short(key)})", INVALID_PARAMETERS)
            out[key] = _json_value(item, where)
        return out
    kind = {bytes: "bytes", complex: "a complex number"}.get(type(value), type(value).__name__)
    raise Refused(f"argument {where!r} holds {kind} ({_short(value)}), which no BFCL parameter type takes; "
                  "write a string, number, boolean, list or dict", INVALID_PARAMETERS)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

"""Parse BFCL ground-truth call strings (``cd(folder='document')``) without evaluating them.

Only the syntax tree is read: the callee must be a bare name and every argument a Python
literal (``ast.literal_eval`` on the argument node alone). Anything else is rejected.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any, Callable


class CallStringError(ValueError):
    """A call string that is not ``name(literal, key=literal, ...)``."""


@dataclass(frozen=True)
class ParsedCall:
    """A call string split into its function name, positional and keyword literal arguments."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def parse_call_string(text: str) -> ParsedCall:
    """Parse one call string; raise :class:`CallStringError` for anything but literal arguments."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise CallStringError(f"not a call expression: {text!r} ({exc.msg})") from None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallStringError(f"expected name(arguments), got {text!r}")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise CallStringError(f"**kwargs are not allowed in {text!r}")
            kwargs[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
        raise CallStringError(f"arguments of {text!r} must be literals ({exc})") from None
    return ParsedCall(node.func.id, args, kwargs)


def bind_arguments(call: ParsedCall, fn: Callable[..., Any]) -> dict[str, Any]:
    """Name the positional arguments of ``call`` with ``fn``'s signature; return keyword arguments."""
    if not call.args:
        return dict(call.kwargs)
    bound = inspect.signature(fn).bind(*call.args, **call.kwargs)
    return dict(bound.arguments)


MAX_CALL_LIST_CHARS = 20_000
"""Longest text read as a call list; longer replies are taken as plain text."""


def _callee_name(node: ast.expr) -> str | None:
    """``f`` or a dotted ``a.b.f`` (BFCL's live functions have dotted names); None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def parse_call_list(text: str) -> list[tuple[str, dict[str, Any]]] | None:
    """Read a prompting model's answer ``[f(a=1), g.h(b="x")]`` as (name, keyword arguments) pairs.

    This is the python call-list format bfcl-eval's default system prompt asks for. Only the
    syntax tree is read and every argument must be a keyword with a literal value. Returns
    None when the text is not such a list (it is then the model's text reply), and ``[]`` for
    an empty list.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("python").strip()
    if not body.startswith("[") or len(body) > MAX_CALL_LIST_CHARS:
        return None
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree.body, ast.List):
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or node.args:
            return None
        name = _callee_name(node.func)
        if name is None:
            return None
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                return None
            try:
                kwargs[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return None
        calls.append((name, kwargs))
    return calls

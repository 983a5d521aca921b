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

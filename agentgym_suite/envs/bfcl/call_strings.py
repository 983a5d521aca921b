"""Parse BFCL ground-truth call strings (``cd(folder='document')``) without evaluating them, and write
calls as a prompting model writes them (:func:`prompting_call_list`).

Only the syntax tree is read: the callee must be a bare name and every argument a Python
literal (``ast.literal_eval`` on the argument node alone). Anything else is rejected.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence


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


def prompting_call_list(calls: Sequence[tuple[str, dict[str, Any]]], language: str = "python") -> str:
    """Calls as a prompting model writes them, the form bfcl-eval's prompting decoder reads: ``[f(a=1), g(b='x')]``.

    Python values are written as Python literals (``repr``). Java and JavaScript values are source
    texts (what the checker's converters read): each is written as a string literal, which bfcl-eval's
    tree-sitter decoders hand over without its quotes, unless the text holds a quote, a backslash or a
    line break, when it is written as the source it is (``new ArrayList<>(Arrays.asList("a"))``). One
    exception: bfcl-eval's Java decoder drops the body of an anonymous class, so a ``HashMap`` with a
    double-brace initializer (``new HashMap<String, String>() {{ put("k", "v"); }}``) would reach the
    checker empty; it is written as a Java text block (three quotes, a line break, the text, three quotes), which the decoder hands over
    as text and the checker's HashMap converter finds the entries in."""
    def value(text: Any) -> str:
        if language == "python":
            return repr(text)
        text = str(text)
        if language == "java" and text.startswith("new HashMap") and "{{" in text and '"""' not in text:
            return '"""\n' + text + '"""'
        return text if any(c in text for c in '"\\\n') else f'"{text}"'
    return "[" + ", ".join(f"{name}(" + ", ".join(f"{k}={value(v)}" for k, v in arguments.items()) + ")"
                           for name, arguments in calls) + "]"

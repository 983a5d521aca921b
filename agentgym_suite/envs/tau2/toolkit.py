"""Shared machinery of the tau2 domain toolkits: tool declaration, JSON schemas, safe maths.

A domain toolkit is a class whose public tools are methods decorated with :func:`tool`.
The decorator stores the OpenAI-format schema next to the method, so the schema the agent
sees and the code that runs can never drift apart. Tools raise ``ValueError`` for a refused
request; the tool-env base turns that into an error result the agent can read.
"""

from __future__ import annotations

import ast
import copy
import json
import operator
from typing import Any, Callable, ClassVar

READ, WRITE, GENERIC = "read", "write", "generic"

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
NUMBER: dict[str, Any] = {"type": "number"}
STRING_LIST: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


def described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """Return ``schema`` with a ``description``."""
    return {**schema, "description": description}


def tool(doc: str, /, *, tool_kind: str = READ, optional: tuple[str, ...] = (), **params: dict[str, Any]) -> Callable:
    """Declare a method as a tool with the given parameter schemas (all required unless ``optional``)."""

    def mark(fn: Callable) -> Callable:
        fn.__tool_spec__ = {  # type: ignore[attr-defined]
            "type": "function",
            "function": {
                "name": fn.__name__,
                "description": doc,
                "parameters": {
                    "type": "object",
                    "properties": params,
                    "required": [p for p in params if p not in optional],
                },
            },
        }
        fn.__tool_kind__ = tool_kind  # type: ignore[attr-defined]
        return fn

    return mark


def plain(value: Any) -> Any:
    """A detached JSON-plain copy of ``value`` (results must not alias the live database)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


class DomainTools:
    """Base class of a domain's agent-side (or user-side) toolkit over a dict database."""

    domain: ClassVar[str] = ""

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db

    @classmethod
    def for_task(cls, db: dict[str, Any], task: dict[str, Any], folder: Any = None) -> DomainTools:
        """The toolkit of one episode of ``task`` (``folder``: the domain's data folder); domains whose tools
        depend on the task or on files beside the database override this."""
        return cls(db)

    @classmethod
    def _tool_methods(cls) -> list[str]:
        return [name for name in sorted(dir(cls)) if hasattr(getattr(cls, name), "__tool_spec__")]

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-format schemas of every tool, in alphabetical order."""
        return [copy.deepcopy(getattr(type(self), name).__tool_spec__) for name in self._tool_methods()]

    def handlers(self) -> dict[str, Callable[..., Any]]:
        """Tool name -> bound method (the allow-list the env dispatches to)."""
        return {name: self._wrap(getattr(self, name)) for name in self._tool_methods()}

    def kind(self, name: str) -> str:
        """``read``, ``write`` or ``generic`` for tool ``name``."""
        return getattr(getattr(type(self), name), "__tool_kind__", READ)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run a tool or an assertion/initialisation function by name (used for gold replay)."""
        if name.startswith("_") or not callable(getattr(self, name, None)):
            raise ValueError(f"{type(self).__name__} has no function {name!r}")
        return getattr(self, name)(**arguments)

    def attach(self, user: DomainTools | None) -> None:
        """Link to the episode's user-side toolkit; domains whose two sides share state override this."""

    @staticmethod
    def assertion_fix(func_name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The call that makes a failing env assertion hold, when the domain knows one (else None)."""
        return None

    @staticmethod
    def _wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            return plain(method(**kwargs))

        run.__name__ = method.__name__
        run.__doc__ = method.__doc__
        run.__wrapped__ = method  # type: ignore[attr-defined]
        return run


class CustomerServiceTools(DomainTools):
    """A :class:`DomainTools` with the two generic tools the retail and airline agents share."""

    @tool("Compute an arithmetic expression with numbers, + - * / and parentheses; the result is rounded to 2 decimals.",
          tool_kind=GENERIC, expression=described(STRING, "Expression, e.g. '2 + 2'."))
    def calculate(self, expression: str) -> str:
        return safe_calculate(expression)

    @tool("Hand the user over to a human agent with a summary of the issue. Only when the user asks for one "
          "or the request cannot be handled with the available tools under the policy.",
          tool_kind=GENERIC, summary=described(STRING, "Summary of the user's issue."))
    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_POWER_BITS = 1_000_000
"""The largest integer power computed (in bits): upstream's ``eval`` would compute any (and hang on ``9**9**9**9``)."""


CALCULATE_GUARD_DEPARTURE = (
    f"calculate refused an integer power over {MAX_POWER_BITS} bits (a guard against hanging the machine: upstream's "
    "eval computes it however long it takes), so that call's answer is the suite's refusal, not upstream's result")
"""The labelled departure an episode names (``info["leaderboard_departures"]``, then ``summary.json``) once the guard fired."""


class PowerTooLarge(ValueError):
    """An integer power :func:`safe_calculate` does not compute (see :data:`MAX_POWER_BITS`)."""


def safe_calculate(expression: str) -> str:
    """Evaluate arithmetic as τ²-bench's ``calculate`` does, by walking the syntax tree (never ``eval``).

    Upstream filters the characters (digits, ``+ - * / ( ) .`` and spaces), passes the rest to ``eval`` without builtins and
    returns ``str(round(float(result), 2))``. The same text gives the same Python operations here, on the same
    values (ints stay ints until the end), so results and failures (a syntax error, a division by zero, ``(2)(3)``
    calling an int, ``()`` an empty tuple) read as upstream's; only an integer power over ``MAX_POWER_BITS`` is refused.
    """
    if not all(ch in "0123456789+-*/(). " for ch in expression):
        raise ValueError("Invalid characters in expression")
    # eval strips leading and trailing spaces; a syntax error propagates in Python's words, as from upstream's eval
    tree = ast.parse(expression.strip(" \t"), filename="<string>", mode="eval")

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant):  # numbers, or ``...`` (Ellipsis), the only constants the characters allow
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow):
                _check_power(left, right)
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        if isinstance(node, ast.Call):  # ``(2)(3)``: Python evaluates the callee and arguments, then fails to call
            callee = walk(node.func)
            for argument in node.args:
                walk(argument)
            raise TypeError(f"'{type(callee).__name__}' object is not callable")
        if isinstance(node, ast.Tuple):  # ``()``
            return tuple(walk(element) for element in node.elts)
        raise ValueError("Invalid expression")

    return str(round(float(walk(tree)), 2))


def _check_power(base: Any, exponent: Any) -> None:
    """Refuse an integer power too large to compute quickly (upstream would compute it, however long it takes)."""
    if (isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1
            and exponent * abs(base).bit_length() > MAX_POWER_BITS):
        raise PowerTooLarge(f"Exponent too large: results over {MAX_POWER_BITS} bits are not computed here")

"""Single-turn scoring: match calls against BFCL possible answers (AST-style).

A call matches a possible answer when the function name is the same, every parameter it
passes is listed in the answer, each value is one of the allowed values (after BFCL's
normalisation: strings compared without spaces and ``,./-_*^``, case-insensitive; ints
accepted for float parameters; tuples as lists) and every answer parameter whose allowed
values do not include ``""`` (the "may be omitted" marker) is present.
"""

from __future__ import annotations

import re
from typing import Any

_STRIP = re.compile(r"[ \,\.\/\-\_\*\^]")


def normalise_string(text: str) -> str:
    """BFCL's string normalisation for comparisons."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _norm(value: Any, expected_type: str = "any") -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and expected_type == "float":
        return float(value)
    if isinstance(value, str):
        return normalise_string(value)
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


_TYPE_CHECKS = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, (list, tuple)),
    "tuple": lambda v: isinstance(v, (list, tuple)),
    "dict": lambda v: isinstance(v, dict),
}


def _dict_matches(value: dict[str, Any], options: list[Any]) -> bool:
    for option in options:
        if not isinstance(option, dict):
            continue
        if any(k not in option or _norm(v) not in [_norm(x) for x in option[k]] for k, v in value.items()):
            continue
        if any(k not in value and "" not in allowed for k, allowed in option.items()):
            continue
        return True
    return False


def value_matches(value: Any, allowed: list[Any], expected_type: str = "any") -> bool:
    """True when ``value`` is one of ``allowed`` under BFCL's normalisation."""
    check = _TYPE_CHECKS.get(expected_type)
    if check is not None and not check(value):
        return False
    if isinstance(value, dict) and any(isinstance(a, dict) for a in allowed):
        return _dict_matches(value, allowed)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for option in allowed:
            if isinstance(option, list) and len(option) == len(value) and all(
                _dict_matches(v, [o]) for v, o in zip(value, option)
            ):
                return True
    target = _norm(value, expected_type)
    return any(target == _norm(a, expected_type) for a in allowed if a != "" or value == "")


def call_matches(name: str, arguments: dict[str, Any], answer: dict[str, dict[str, list[Any]]], types: dict[str, str]) -> str | None:
    """``None`` when the call matches the one-function ``answer``; else the reason it does not."""
    (want_name, params), = answer.items()
    if name != want_name:
        return f"called {name}, expected {want_name}"
    for key, value in arguments.items():
        if key not in params:
            return f"{name}: unexpected parameter {key!r}"
        if not value_matches(value, params[key], types.get(key, "any")):
            return f"{name}: {key}={value!r} is not one of {params[key]!r}"
    for key, allowed in params.items():
        if key not in arguments and "" not in allowed:
            return f"{name}: missing parameter {key!r}"
    return None


def match_calls(calls: list[tuple[str, dict[str, Any]]], answers: list[dict[str, Any]], docs: dict[str, dict[str, str]]) -> tuple[bool, str]:
    """Match calls to answers one to one, in any order. Returns (success, explanation)."""
    if len(calls) != len(answers):
        return False, f"{len(calls)} call(s) made, {len(answers)} expected"
    used = [False] * len(answers)
    reasons: list[str] = []

    def assign(i: int) -> bool:
        if i == len(calls):
            return True
        name, args = calls[i]
        for j, answer in enumerate(answers):
            if used[j]:
                continue
            reason = call_matches(name, args, answer, docs.get(name, {}))
            if reason is None:
                used[j] = True
                if assign(i + 1):
                    return True
                used[j] = False
            else:
                reasons.append(reason)
        return False

    if assign(0):
        return True, "all calls match"
    return False, reasons[0] if reasons else "no match"


def _first_value(value: Any) -> Any:
    """A concrete value from an allowed value; dicts hold allowed lists per key, resolved recursively."""
    if isinstance(value, dict):
        return oracle_arguments(value) if all(isinstance(v, list) for v in value.values()) else value
    if isinstance(value, list):
        return [_first_value(v) for v in value]
    return value


def oracle_arguments(params: dict[str, list[Any]], required: Any = ()) -> dict[str, Any]:
    """A call's arguments built from the first allowed value of each parameter (omitting optional
    ones, unless listed in ``required``: then its first value that is not the omission marker)."""
    out: dict[str, Any] = {}
    for key, allowed in params.items():
        if not allowed or allowed[0] == "":
            concrete = [a for a in allowed if a != ""]
            if key in required and concrete:
                out[key] = _first_value(concrete[0])
            continue
        out[key] = _first_value(allowed[0])
    return out


def placeholder_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Type-correct placeholder values for the required parameters of an OpenAI parameter schema."""
    defaults = {"string": "value", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    props = schema.get("properties", {})
    out: dict[str, Any] = {}
    for key in schema.get("required", []):
        spec = props.get(key, {})
        out[key] = spec["enum"][0] if spec.get("enum") else defaults.get(spec.get("type", "string"), "value")
    return out

"""Oracle arguments for BFCL's single-turn answers (scoring is bfcl-eval's own checker, :mod:`.upstream`).

A possible answer lists, per parameter, the values the checker accepts; ``""`` among them marks
a parameter that may be left out.
"""

from __future__ import annotations

from typing import Any


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

"""Convert BFCL function docs (Python-flavoured types) to OpenAI tool schemas."""

from __future__ import annotations

import copy
from typing import Any

_TYPE_MAP = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
}
_DROP_KEYS = ("response", "default", "optional")


def _convert(node: Any) -> Any:
    if isinstance(node, list):
        return [_convert(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out["type"] = _TYPE_MAP.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {name: _convert(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = _convert(value)
        elif key in _DROP_KEYS and not isinstance(value, dict):
            continue
        else:
            out[key] = copy.deepcopy(value)
    if "enum" in out and out.get("type") in ("number", "integer"):
        out.pop("enum")  # BFCL enums are sometimes strings for numeric params
    return out


def to_openai_tool(doc: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc as an OpenAI ``{"type": "function", "function": {...}}`` schema."""
    params = _convert(doc.get("parameters") or {"type": "dict", "properties": {}})
    params["type"] = "object"
    params.setdefault("properties", {})
    required = [r for r in params.get("required", []) if r in params["properties"]]
    params["required"] = required
    return {
        "type": "function",
        "function": {"name": doc["name"], "description": doc.get("description", ""), "parameters": params},
    }

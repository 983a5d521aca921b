"""The discoverable tools' descriptions, read from upstream's tool source placed with the data.

In τ²-bench a discoverable tool is described to the agent (when it unlocks one) and to the customer
(when the agent hands one over) by its docstring: the first part is the description, each ``Args:``
line a parameter ``name (type[, optional]): description``, and the first line under ``Returns:`` the
success message. Those texts are part of the benchmark, so this suite reads them from upstream's
``tools.py`` of the pinned commit, which ``agentgym data fetch tau2`` places next to the domain's data
as ``domains/banking_knowledge/tools_source.py``. The file is parsed (``ast``), never imported or run.
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

SOURCE_NAME = "tools_source.py"
"""Where the fetch puts upstream's ``src/tau2/domains/banking_knowledge/tools.py`` (inside the domain folder)."""

_ARGS = re.compile(r"\n\s*Args:\s*\n")
_RETURNS = re.compile(r"\n\s*Returns:\s*\n")
_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)


@lru_cache(maxsize=4)
def docstrings(path_text: str) -> dict[str, str]:
    """Function name -> cleaned docstring, for every function defined in the source file at ``path_text``."""
    tree = ast.parse(Path(path_text).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                out.setdefault(node.name, inspect.cleandoc(doc))
    return out


def describe(name: str, doc: str) -> dict[str, Any]:
    """A tool's description, parameters and success message, parsed from its docstring as upstream parses it."""
    parts = _ARGS.split(doc, maxsplit=1)
    params: dict[str, dict[str, Any]] = {}
    success = "Action completed successfully."
    if len(parts) > 1:
        sections = _RETURNS.split(parts[1], maxsplit=1)
        if len(sections) > 1:
            success = sections[1].strip().split("\n")[0].strip()
        for match in _ARG_LINE.finditer(sections[0]):
            type_info = match.group(2) or "string"
            kind = re.sub(r",?\s*optional", "", type_info, flags=re.IGNORECASE).strip() or "string"
            params[match.group(1)] = {"type": kind, "description": match.group(3).strip(),
                                      "required": "optional" not in type_info.lower()}
    return {"name": name, "description": parts[0].strip(), "parameters": params, "success_message": success}


def for_agent(info: dict[str, Any]) -> str:
    """A parsed tool as the agent reads it after unlocking it."""
    lines = [f"  - {name}: {p.get('type', 'string')}{' (required)' if p.get('required', True) else ' (optional)'} - "
             f"{p.get('description', '')}" for name, p in info.get("parameters", {}).items()]
    params = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {info['name']}\nDescription: {info['description']}\nParameters:\n{params}"

"""An env id's own options (its ``gymnasium.make`` keyword arguments, given to the CLI as
``--env-kwargs JSON``), read from the env class's signature and the ``Args:`` section of its
docstring, for ``agentgym list ENV_ID`` and ``agentgym eval ENV_ID --help``.

A class whose ``__init__`` takes ``**kwargs`` passes them to its base, so the bases' options are
listed too (the subclass's own first).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from agentgym_suite.registration import env_class

_ARG = re.compile(r"^(\*{0,2}\w+)(?: \([^)]*\))?:\s*(.*)$")
_ROLE = re.compile(r":\w+:`~?\.?([^`]*)`")


def plain(text: str) -> str:
    """reStructuredText markup of a docstring made terminal-plain (``x`` and :class:`~a.X` -> x, X)."""
    return _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text).replace("``", "")


@dataclass(frozen=True)
class EnvOption:
    """One keyword argument of an env class."""

    name: str
    default: str
    """The default as Python writes it, or ``required``."""
    help: str
    """The docstring's description (empty when it has none)."""


def docstring_args(obj: Any) -> dict[str, str]:
    """``{name: description}`` from the ``Args:`` section of ``obj``'s docstring (Google style)."""
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() in ("Args:", "Arguments:"))
    except StopIteration:
        return {}
    found: dict[str, str] = {}
    name = ""
    indent = None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        if indent is None:
            indent = width
        if width < indent or (width == 0 and line.rstrip().endswith(":")):
            break
        match = _ARG.match(line.strip()) if width == indent else None
        if match:
            name = match.group(1).lstrip("*")
            found[name] = match.group(2).strip()
        elif name:
            found[name] = (found[name] + " " + line.strip()).strip()
    return found


def env_options(env_id: str) -> list[EnvOption]:
    """The keyword arguments ``gymnasium.make(env_id, ...)`` takes (see the module docstring);
    empty when the env cannot be loaded here."""
    cls = env_class(env_id)
    if cls is None:
        return []
    classes = [c for c in inspect.getmro(cls) if c is not object] if inspect.isclass(cls) else [cls]
    options: dict[str, EnvOption] = {}
    for klass in classes:
        init = klass.__dict__.get("__init__") if inspect.isclass(klass) else klass
        if init is None:
            continue
        try:
            params = list(inspect.signature(init).parameters.values())
        except (TypeError, ValueError):
            break
        described = docstring_args(klass)
        for param in params:
            if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name in options:
                continue
            default = "required" if param.default is param.empty else repr(param.default)
            options[param.name] = EnvOption(param.name, default, plain(described.get(param.name, "")))
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break  # no **kwargs: the bases' options are not reachable through this class
    return list(options.values())


def options_text(env_id: str, width: int = 100) -> str:
    """The options of ``env_id`` as indented text lines, or a line saying there are none."""
    options = env_options(env_id)
    if not options:
        return f"{env_id} takes no options here (or cannot be loaded on this machine)."
    lines = [f"{env_id} options (--env-kwargs '{{\"name\": value, ...}}'):"]
    for option in options:
        head = f"  {option.name} = {option.default}"
        if len(head) > width // 2:
            head = head[: width // 2 - 3] + "..."
        lines.append(head)
        if option.help:
            lines.extend(textwrap.wrap(option.help, width=width, initial_indent="      ", subsequent_indent="      "))
    return "\n".join(lines)

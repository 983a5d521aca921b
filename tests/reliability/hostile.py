"""Hypothesis strategies for the classes of hostile action that once broke an env.

Each strategy draws ``(kind, action)`` for one env state:

* ``huge_number`` — an integer with more digits than Python converts, in tool-call arguments
  (a ``<tool_call>`` block, JSON-string arguments, OpenAI ``tool_calls``) or in a command;
* ``invisible`` — text of control and format characters only (NUL, ESC, zero-width space);
* ``surrogate`` — a lone surrogate in otherwise sensible text, or JSON-escaped in arguments;
* ``meta`` — out-of-world commands of the engines (``save``, ``restart``, ``script``,
  ``reset task``, ...), alone and chained behind an ordinary command;
* ``unknown_tool`` — a call to a tool the env does not have (its name is code, a shell line,
  a private method of the backend);
* ``refused`` — well-formed calls to the env's own tools with ids and paths that do not exist,
  which the backend answers with an error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hypothesis import strategies as st

from agentgym_suite.envs.textworld.meta_commands import REFUSED_COMMANDS as TEXTWORLD_REFUSED

DIGITS = sys.get_int_max_str_digits()
INVALID_KINDS = ("huge_number", "invisible", "surrogate", "unknown_tool")
"""Kinds every env must answer with an invalid action that leaves its state alone."""
INVISIBLE_CHARS = [chr(c) for c in range(32)] + ["\x7f", "\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
META_COMMANDS = [*TEXTWORLD_REFUSED, "look. save", "look then script", "inventory, restart", "SAVE", "transcripts",
                 "superbriefly"]
SIMULATOR_COMMANDS = ["reset task", "RESET TASK", "  reset   task "]
"""ScienceWorld's own out-of-world command (its ``help`` lists it), drawn as often as all of the
interpreter's together."""
BOGUS_VALUES = ["no-such-id-0", "../../../../etc", "/etc/passwd/..", "#W0000000"]
UNKNOWN_TOOLS = ["__import__('os').system('id')", "rm -rf /", "_load_scenario", "eval", "tool_call"]


def tool_schemas(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The function part of every tool in ``info["tools"]``."""
    return [t.get("function", t) for t in info.get("tools") or [] if isinstance(t, dict)]


def _call(name: str, arguments: Any, shape: str) -> str:
    if shape == "block":
        return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"
    if shape == "string_arguments":
        return f"<tool_call>{json.dumps({'name': name, 'arguments': json.dumps(arguments)})}</tool_call>"
    call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return json.dumps({"role": "assistant", "content": "", "tool_calls": [call]})


def _huge_call(name: str, key: str, digits: int, digit: str, shape: str) -> str:
    number = digit * digits
    raw_args = "{" + json.dumps(key) + ": " + number + "}"
    if shape == "block":
        return "<tool_call>{" + f'"name": {json.dumps(name)}, "arguments": {raw_args}' + "}</tool_call>"
    if shape == "string_arguments":
        return "<tool_call>" + json.dumps({"name": name, "arguments": raw_args}) + "</tool_call>"
    call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": raw_args}}
    return json.dumps({"role": "assistant", "content": "", "tool_calls": [call]})


def _with_surrogate(text: str, position: int, code: int) -> str:
    cut = position % (len(text) + 1)
    return text[:cut] + chr(code) + text[cut:]


def _bogus_arguments(schema: dict[str, Any], value: str) -> dict[str, Any]:
    """Required arguments, type-correct, every string set to ``value`` (enums keep a valid member)."""
    defaults = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    props = (schema.get("parameters") or {}).get("properties") or {}
    out: dict[str, Any] = {}
    for key in (schema.get("parameters") or {}).get("required") or []:
        spec = props.get(key) or {}
        if spec.get("enum"):
            out[key] = spec["enum"][0]
        else:
            out[key] = defaults.get(spec.get("type", "string"), value)
    return out


def hostile_strategies(info: dict[str, Any], wrap: Any, tool_env: bool, sensible: list[str],
                       refusals: bool = True) -> dict[str, st.SearchStrategy[str]]:
    """A strategy per hostile kind that applies to the current state.

    Args:
        info: the last info dict (its tools or admissible actions).
        wrap: the env's ``format_action`` (puts a bare command in the env's action format).
        tool_env: whether actions are assistant messages with tool calls.
        sensible: ordinary actions to hide a surrogate in (oracle or admissible actions).
        refusals: include ``unknown_tool`` and ``refused`` calls (tool envs whose scoring ignores the calls
            they refuse; FinMCP-Bench counts the name of every call made, so either costs its win).
    """
    digits = st.integers(DIGITS + 1, DIGITS + 3000)
    digit = st.sampled_from("123456789")
    surrogate = st.integers(0xD800, 0xDFFF)
    base = st.sampled_from(sensible or ["look around"])
    kinds: dict[str, list[st.SearchStrategy[str]]] = {
        "invisible": [st.text(st.sampled_from(INVISIBLE_CHARS), min_size=1, max_size=64)],
        "surrogate": [st.builds(_with_surrogate, base, st.integers(0, 10_000), surrogate)],
    }
    schemas = [s for s in tool_schemas(info) if s.get("name")]
    if tool_env and schemas:
        names = st.sampled_from([s["name"] for s in schemas])
        shapes = st.sampled_from(["block", "string_arguments", "openai"])
        kinds["huge_number"] = [st.builds(_huge_call, names, st.sampled_from(["n", "id", "amount"]), digits, digit, shapes)]
        # json.dumps writes the surrogate as an ASCII escape: the text is clean, the decoded value is not
        kinds["surrogate"].append(st.builds(lambda n, c, shape: _call(n, {"text": chr(c)}, shape), names, surrogate, shapes))
        if refusals:
            kinds["unknown_tool"] = [st.builds(lambda name, shape: _call(name, {}, shape), st.sampled_from(UNKNOWN_TOOLS),
                                               shapes)]
            kinds["refused"] = [st.builds(lambda schema, value, shape: _call(schema["name"], _bogus_arguments(schema, value), shape),
                                          st.sampled_from(schemas), st.sampled_from(BOGUS_VALUES),
                                          st.sampled_from(["block", "openai"]))]
    else:
        kinds["huge_number"] = [st.builds(lambda n, d: wrap(f"take {d * n}"), digits, digit)]
        kinds["meta"] = [st.sampled_from(META_COMMANDS).map(wrap), st.sampled_from(SIMULATOR_COMMANDS).map(wrap)]
    return {kind: st.one_of(options) for kind, options in kinds.items()}


def hostile_action(info: dict[str, Any], wrap: Any, tool_env: bool, sensible: list[str]) -> st.SearchStrategy[str]:
    """Any hostile action for the current state (see :func:`hostile_strategies`)."""
    return st.one_of(list(hostile_strategies(info, wrap, tool_env, sensible).values()))

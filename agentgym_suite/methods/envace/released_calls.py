"""The released Caller parser's reading of an assistant message (EnvACE ``tool_parser.parse_tool_calls``).

The released env reads tool calls more strictly than the suite's shared parser
(:func:`agentgym_suite.core.tool_calls.parse_tool_calls`), and a message it cannot read ends
the trajectory at once, with no simulator call. Its rules, restated:

* a message without the text ``<tool_call>`` is a plain reply;
* a call block is exactly ``"\\n<tool_call>\\n" BODY "\\n</tool_call>"`` (the newlines are part of
  the block); a message that mentions ``<tool_call>`` but holds no such block is malformed
  (``NO_TOOL_CALL_FOUND``) - ``<tool_call>{...}</tool_call>`` on one line included. One
  departure: a block at the very start of the message counts too. The released Caller thinks
  first (``enable_thinking=True``), so its blocks always follow a newline; our callers (oracles,
  models without thinking) may start with the block;
* a body is JSON: one call object or a list of them (``JSON_DECODE_ERROR`` otherwise);
* a call's arguments are its ``parameters``, else its ``arguments``; a call with neither is
  malformed (``NO_ARGUMENTS``), and so is one whose name is not a non-empty string
  (``INVALID_TOOL_NAME``);
* one bad block makes the whole message malformed: none of its calls runs;
* text after the first block is dropped from the assistant message.

:func:`read_released` applies these rules; :func:`normalised_command` rewrites a readable
message so that the shared parser sees exactly the released parser's calls. ``tests/conformance/
test_envace.py`` compares :func:`read_released` with the released parser on fixed messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

BLOCK_START = "<tool_call>"
_BLOCK = re.compile(r"(?:^|\n)<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)

NO_TOOL_CALL_FOUND = "NO_TOOL_CALL_FOUND"
JSON_DECODE_ERROR = "JSON_DECODE_ERROR"
NO_ARGUMENTS = "NO_ARGUMENTS"
INVALID_TOOL_NAME = "INVALID_TOOL_NAME"
MESSAGES = {
    NO_TOOL_CALL_FOUND: "no tool call block found: write each call as a line <tool_call>, a line with "
                        '{"name": ..., "arguments": {...}}, and a line </tool_call>',
    JSON_DECODE_ERROR: "a tool call block is not valid JSON",
    NO_ARGUMENTS: "a tool call has no arguments; give an empty object when the tool takes none",
    INVALID_TOOL_NAME: "a tool call has no valid name",
}


@dataclass
class ReleasedReading:
    """What the released Caller parser makes of one assistant message."""

    content: str
    """The message text the released env keeps: the text before the first call block."""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    """(name, arguments) of every call, in order; empty when the message is malformed."""
    error: str | None = None
    """The released error code when the message is malformed, else None."""

    def payload(self) -> dict[str, Any]:
        """The ``error_tool_call`` result given for a malformed message (it ends the episode)."""
        assert self.error is not None
        return {"error_tool_call": {"code": self.error, "message": MESSAGES[self.error], "details": ""}}


def read_released(text: str) -> ReleasedReading:
    """Read ``text`` by the released parser's rules (see the module docstring); never raises."""
    if BLOCK_START not in text:
        return ReleasedReading(text)
    bodies = _BLOCK.findall(text)
    if not bodies:
        return ReleasedReading(text, error=NO_TOOL_CALL_FOUND)
    calls: list[tuple[str, Any]] = []
    for body in bodies:
        try:
            value = json.loads(body.strip())
        except (json.JSONDecodeError, RecursionError, ValueError):
            return ReleasedReading(text, error=JSON_DECODE_ERROR)
        for item in value if isinstance(value, list) else [value]:
            name = item.get("name") if isinstance(item, dict) else None
            arguments = item.get("parameters") if isinstance(item, dict) else None
            if arguments is None and isinstance(item, dict):
                arguments = item.get("arguments")
            if arguments is None:
                return ReleasedReading(text, error=NO_ARGUMENTS)
            if not isinstance(name, str) or not name.strip():
                return ReleasedReading(text, error=INVALID_TOOL_NAME)
            calls.append((name.strip(), arguments))
    start = 0 if text.startswith(BLOCK_START + "\n") else text.find("\n" + BLOCK_START + "\n")
    return ReleasedReading(text[:start] if start >= 0 else text, calls)


def normalised_command(reading: ReleasedReading) -> str:
    """The message rewritten as its kept text and one canonical block per released call."""
    blocks = "".join("\n<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
                     + "\n</tool_call>" for name, arguments in reading.calls)
    return reading.content + blocks

"""The Simulator role's prompt (EnvACE world rehearsal).

One simulator prompt per tool call: a system message that states the job (validate, then
answer with a plausible result in the output contract) and a user message with five
sections, in this order:

1. ``Candidate tools`` - the task's tools as JSON schemas: the whitelist;
2. ``Recorded examples`` - (name, arguments, result) triples recorded for this task, or
   ``<unavailable>`` when the data has none;
3. ``Conversation so far`` - ``User: ...`` / ``Assistant: ...`` / ``Tool[name]: ...`` lines;
4. ``Caller's latest output`` - the caller's raw text, tool-call blocks included;
5. ``Tool call to simulate`` - name, JSON schema and parsed arguments.

Long prompts are cut to ``max_chars`` by dropping the oldest conversation lines first, then
the examples from the end; the tools and the call itself are always kept whole.

``style="compact"`` (:func:`build_simulator_messages`) is the same job in a fraction of the
tokens, for small models: a short system prompt; up to :data:`COMPACT_EXAMPLES` recorded
examples as earlier call/answer exchanges (the called tool's first, results clipped); then the
whitelist as tool names with only the called tool's parameter schema, the last
:data:`COMPACT_HISTORY` conversation lines, and no copy of the caller's raw output (the call
is given parsed). The ``## Tool call to simulate`` section is the same in both styles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from agentgym_suite.core.tool_calls import INVALID_PARAMETERS, INVALID_TOOL_CALL_FORMAT, TOOL_NOT_AVAILABLE, tool_name

UNAVAILABLE = "<unavailable>"
MAX_TOOL_TEXT = 1_500
"""Longest tool result kept per ``Tool[name]`` line of the conversation."""

SIMULATOR_SYSTEM_PROMPT = f"""You play the environment behind a set of tools. An assistant (the caller) has just made a tool call; you did not see the real system, so you must predict what the tool would return.

Work in two steps.
Step 1 - check the call, in this order, and stop at the first failure:
  a. format: the call is a well-formed tool call with a JSON object of arguments; otherwise the code is {INVALID_TOOL_CALL_FORMAT};
  b. whitelist: the tool is one of the candidate tools; otherwise the code is {TOOL_NOT_AVAILABLE};
  c. schema: the arguments satisfy the tool's JSON schema (required fields present, types right, no unknown fields where the schema forbids them); otherwise the code is {INVALID_PARAMETERS}.
  On a failure the result is {{"error_tool_call": {{"code": "<CODE>", "message": "<what is wrong>", "details": "<the offending part>"}}}}.
Step 2 - if the call passes, produce the result the real tool would return: the same shape and style as the recorded examples, and consistent with everything the conversation already established (ids, names, amounts, earlier changes of state). Invent nothing the caller could not have caused; report a domain error the way the examples do when the request cannot succeed.

Answer with an optional <think>...</think> block, then exactly:
<execution_result>
<one non-empty JSON object or array on the lines in between>
</execution_result>
Write nothing after </execution_result>."""


COMPACT_SYSTEM_PROMPT = f"""You simulate the tools of a software system. For the tool call you are given, answer with what the tool returns: the line <execution_result>, then the result as one non-empty JSON object or array, then the line </execution_result>.
The result has the same shape as the example results of that tool and agrees with the conversation (same ids, names and values); a call identical to an example returns that example's result.
If the tool is not in the tool list, the result is {{"error_tool_call": {{"code": "{TOOL_NOT_AVAILABLE}", "message": "..."}}}}.
If the arguments break the tool's parameter schema, it is {{"error_tool_call": {{"code": "{INVALID_PARAMETERS}", "message": "..."}}}}."""
COMPACT_EXAMPLES = 3
"""Recorded examples the compact prompt shows, as earlier call/answer exchanges (the called tool's first)."""
COMPACT_HISTORY = 6
"""Conversation lines kept by the compact prompt."""
COMPACT_TEXT = 300
"""Longest example result or conversation line in the compact prompt."""
STYLES = ("full", "compact")


@dataclass(frozen=True)
class SimulatorRequest:
    """Everything the simulator prompt needs for one call."""

    tools: Sequence[dict[str, Any]]
    examples: Sequence[dict[str, Any]]
    messages: Sequence[dict[str, Any]]
    caller_output: str
    name: str
    arguments: dict[str, Any]
    raw: str = ""
    """The call block as written, when it did not parse (then ``arguments`` is empty)."""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def conversation_lines(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The conversation as ``User:`` / ``Assistant:`` / ``Tool[name]:`` lines (system messages left out)."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            lines.append(f"User: {content}")
        elif role == "assistant":
            calls = [c.get("function", c) for c in message.get("tool_calls") or []]
            rendered = " ".join(f"<call {c.get('name')} {c.get('arguments')}>" for c in calls)
            lines.append("Assistant: " + " ".join(part for part in (content, rendered) if part))
        elif role == "tool":
            lines.append(f"Tool[{message.get('name', '')}]: {_clip(content, MAX_TOOL_TEXT)}")
    return lines


def _schema_of(tools: Sequence[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for tool in tools:
        if tool_name(tool) == name:
            return tool
    return None


def build_simulator_messages(request: SimulatorRequest, *, max_chars: int = 24_000, style: str = "full") -> list[dict[str, str]]:
    """The system and user messages of one simulator generation (see the module docstring)."""
    if style == "compact":
        return _compact_messages(request, max_chars)
    if style != "full":
        raise ValueError(f"style={style!r}; choose one of {STYLES}.")
    conversation = conversation_lines(request.messages)
    examples = [_dump({"name": e.get("name"), "arguments": e.get("arguments"), "result": e.get("result")})
                for e in request.examples]
    schema = _schema_of(request.tools, request.name)
    head = "## Candidate tools (the whitelist)\n" + "\n".join(_dump(t) for t in request.tools)
    tail = (
        "## Caller's latest output\n" + request.caller_output.strip()
        + "\n\n## Tool call to simulate\n"
        + f"Name: {request.name}\n"
        + f"Schema: {_dump(schema) if schema is not None else 'not among the candidate tools'}\n"
        + f"Arguments: {_dump(request.arguments)}"
        + (f"\nRaw call (it did not parse): {_clip(request.raw, MAX_TOOL_TEXT)}" if request.raw else "")
    )

    def render() -> str:
        shown = "\n".join(examples) if examples else UNAVAILABLE
        history = "\n".join(conversation) if conversation else "(nothing yet)"
        return (f"{head}\n\n## Recorded examples\n{shown}\n\n## Conversation so far\n{history}\n\n{tail}\n\n"
                "Check the call, then give its result in the required format.")

    text = render()
    while len(text) > max_chars and (conversation or examples):
        if conversation:
            conversation = conversation[1:]
        else:
            examples = examples[:-1]
        text = render()
    return [{"role": "system", "content": SIMULATOR_SYSTEM_PROMPT}, {"role": "user", "content": text}]


def _compact_messages(request: SimulatorRequest, max_chars: int) -> list[dict[str, str]]:
    conversation = [_clip(line, COMPACT_TEXT) for line in conversation_lines(request.messages)[-COMPACT_HISTORY:]]
    schema = _schema_of(request.tools, request.name)
    parameters = (schema.get("function", schema).get("parameters") if isinstance(schema, dict) else None)
    names = ", ".join(tool_name(t) for t in request.tools)
    # examples as earlier exchanges (the called tool's first): a small model copies a pattern it has seen answered
    ordered = sorted(request.examples, key=lambda e: e.get("name") != request.name)[:COMPACT_EXAMPLES]
    shots: list[dict[str, str]] = []
    for example in ordered:
        shots.append({"role": "user", "content": f"## Tool call to simulate\nName: {example.get('name')}\n"
                                                 f"Arguments: {_dump(example.get('arguments'))}"})
        shots.append({"role": "assistant", "content": "<execution_result>\n" + _clip(_dump(example.get("result")), COMPACT_TEXT)
                      + "\n</execution_result>"})
    # the call block has the shots' layout, so the answer to copy is the one to an identical call
    tail = f"## Tool call to simulate\nName: {request.name}\nArguments: {_dump(request.arguments)}"
    if request.raw:
        tail += f"\nRaw call (it did not parse): {_clip(request.raw, COMPACT_TEXT)}"
    params = _dump(parameters) if schema is not None else "not in the tool list"

    def render() -> str:
        history = "\n".join(conversation) if conversation else "(nothing yet)"
        return (f"## Tools\n{names}\n\n## Parameters of {request.name}\n{params}\n\n"
                f"## Conversation\n{history}\n\n{tail}")

    text = render()
    while len(text) > max_chars and conversation:
        conversation = conversation[1:]
        text = render()
    return [{"role": "system", "content": COMPACT_SYSTEM_PROMPT}, *shots, {"role": "user", "content": text}]

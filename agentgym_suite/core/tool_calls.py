"""The tool-call protocol shared by every tool env (BFCL, tau2, VitaBench, FinMCP, synthetic,
and the envs that play over them).

An action is an assistant message. Tool calls inside it are Hermes/Qwen blocks::

    <tool_call>
    {"name": "get_order", "arguments": {"order_id": "#W123"}}
    </tool_call>

(several per message allowed), or an OpenAI-style message serialised as JSON with a
``tool_calls`` list. Parsing never raises and never evaluates anything: JSON is read with
``json.loads`` and arguments are checked against the tool's JSON schema with ``jsonschema``.

JSON that parses but breaks a limit of this parser is refused with an error the agent can
read: nesting deeper than :data:`MAX_JSON_DEPTH`, an integer with more digits than Python
converts (``sys.get_int_max_str_digits()``, 4300 by default), and strings holding a lone
surrogate (``"\\ud800"``), which no UTF-8 log, tokenizer or backend can take.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from agentgym_suite.core.actions import encoding_problem

TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
INVALID_TOOL_CALL_FORMAT = "INVALID_TOOL_CALL_FORMAT"
TOOL_NOT_AVAILABLE = "TOOL_NOT_AVAILABLE"
INVALID_PARAMETERS = "INVALID_PARAMETERS"
TOOL_EXECUTION_ERROR = "TOOL_EXECUTION_ERROR"
MAX_JSON_DEPTH = 64
"""Deepest nesting of lists/objects accepted in a tool call (deeper input would exhaust the stack)."""


class JSONLimitError(json.JSONDecodeError):
    """JSON that parses but breaks one of the parser's limits (depth, digits, encodable text)."""


def limit_problem(value: Any) -> str:
    """Why a parsed JSON value breaks the parser's limits ('' when it does not); no recursion.

    Also what other readers of tool calls (BFCL's prompting decoder) check their arguments with.
    """
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str):
            if encoding_problem(item):
                return "a string holds a lone surrogate character, which cannot be encoded as UTF-8"
        elif isinstance(item, (dict, list)):
            if level > MAX_JSON_DEPTH:
                return f"nested deeper than {MAX_JSON_DEPTH} levels"
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return ""


def _long_number_problem(text: str) -> JSONLimitError:
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d{{{limit + 1},}}", text) if limit else None
    return JSONLimitError(f"a number has more than {limit} digits", text, found.start() if found else 0)


def _loads(text: str) -> Any:
    """``json.loads`` within the parser's limits; a breach raises :class:`JSONLimitError`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONLimitError(f"nested deeper than {MAX_JSON_DEPTH} levels", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # int() refuses a literal longer than sys.get_int_max_str_digits()
        raise _long_number_problem(text) from None
    problem = limit_problem(value)
    if problem:
        raise JSONLimitError(problem, text, 0)
    return value


@dataclass(frozen=True)
class ToolCall:
    """One well-formed call: a tool name and its JSON arguments."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def to_openai(self) -> dict[str, Any]:
        """The call as an OpenAI ``tool_calls`` item."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


@dataclass(frozen=True)
class ToolCallError:
    """A call that could not be parsed or validated; ``code`` is one of the module constants."""

    code: str
    message: str
    raw: str = ""
    name: str = ""
    id: str = ""
    """The call's id when the message gave one (an OpenAI ``tool_calls`` item): its result answers it."""


@dataclass
class ParsedMessage:
    """An assistant message split into its text content and its tool calls."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[ToolCallError] = field(default_factory=list)

    @property
    def has_tool_calls(self) -> bool:
        """True when the message tried to call at least one tool (well-formed or not)."""
        return bool(self.calls or self.errors)


def _call_from_obj(obj: Any, raw: str, index: int) -> ToolCall | ToolCallError:
    if isinstance(obj, dict) and "function" in obj and isinstance(obj["function"], dict):
        call_id = str(obj.get("id") or "")
        obj = obj["function"]
    else:
        call_id = ""
    if not isinstance(obj, dict):
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "a tool call must be a JSON object with 'name' and 'arguments'", raw,
                             id=call_id)
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "the tool call has no 'name' string", raw, id=call_id)
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = _loads(arguments) if arguments.strip() else {}
        except JSONLimitError as exc:
            return ToolCallError(INVALID_TOOL_CALL_FORMAT, f"'arguments' is refused: {exc.msg}", raw, name)
        except json.JSONDecodeError as exc:
            return ToolCallError(INVALID_TOOL_CALL_FORMAT, f"'arguments' is not valid JSON: {exc.msg}", raw, name,
                                 id=call_id)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolCallError(INVALID_TOOL_CALL_FORMAT, "'arguments' must be a JSON object", raw, name, id=call_id)
    return ToolCall(name=name.strip(), arguments=arguments, id=call_id or f"call_{index}")


def _parse_openai_message(text: str) -> ParsedMessage | None:
    stripped = text.strip()
    if not (stripped.startswith("{") and '"tool_calls"' in stripped):
        return None
    try:
        obj = _loads(stripped)
    except JSONLimitError as exc:  # JSON, but over a limit: an error, not a text reply
        return ParsedMessage("", errors=[ToolCallError(INVALID_TOOL_CALL_FORMAT, f"the message JSON is refused: {exc.msg}", stripped[:500])])
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("tool_calls"), list):
        return None
    parsed = ParsedMessage(content=str(obj.get("content") or ""))
    for i, item in enumerate(obj["tool_calls"]):
        result = _call_from_obj(item, json.dumps(item, ensure_ascii=False)[:500], i)
        (parsed.errors if isinstance(result, ToolCallError) else parsed.calls).append(result)  # type: ignore[arg-type]
    return parsed


def parse_tool_calls(message: Any) -> ParsedMessage:
    """Split an assistant message into text content and tool calls. Never raises.

    Accepts a string with ``<tool_call>`` blocks, a JSON string of an OpenAI assistant
    message with ``tool_calls``, or such a message as a ``dict``.
    """
    if isinstance(message, dict):
        try:
            message = json.dumps(message, ensure_ascii=False, default=str)
        except (ValueError, RecursionError) as exc:  # a circular dict, an int over the digit limit
            return ParsedMessage("", errors=[ToolCallError(INVALID_TOOL_CALL_FORMAT, f"the message cannot be read as JSON: {exc}")])
    if not isinstance(message, str):
        return ParsedMessage("", errors=[ToolCallError(INVALID_TOOL_CALL_FORMAT, f"the message must be text, got {type(message).__name__}")])
    openai = _parse_openai_message(message)
    if openai is not None:
        return openai
    parsed = ParsedMessage(content=TOOL_CALL_BLOCK.sub("", message).strip())
    blocks = TOOL_CALL_BLOCK.findall(message)
    opens, closes = message.count("<tool_call>"), message.count("</tool_call>")
    if opens != closes or opens != len(blocks):
        parsed.errors.append(
            ToolCallError(INVALID_TOOL_CALL_FORMAT, f"unbalanced <tool_call> tags ({opens} opening, {closes} closing)")
        )
    for i, block in enumerate(blocks):
        raw = block.strip()
        try:
            obj = _loads(raw)
        except JSONLimitError as exc:
            parsed.errors.append(ToolCallError(INVALID_TOOL_CALL_FORMAT, f"the <tool_call> body is refused: {exc.msg}", raw[:500]))
            continue
        except json.JSONDecodeError as exc:
            parsed.errors.append(
                ToolCallError(INVALID_TOOL_CALL_FORMAT, f"the <tool_call> body is not valid JSON ({exc.msg} at char {exc.pos})", raw[:500])
            )
            continue
        result = _call_from_obj(obj, raw[:500], i)
        (parsed.errors if isinstance(result, ToolCallError) else parsed.calls).append(result)  # type: ignore[arg-type]
    # strip any dangling tags so the text content is clean
    parsed.content = parsed.content.replace("<tool_call>", "").replace("</tool_call>", "").strip()
    return parsed


def tool_name(tool: dict[str, Any]) -> str:
    """Name of an OpenAI-format tool schema (``{"type": "function", "function": {...}}`` or bare)."""
    return str((tool.get("function") or tool).get("name", ""))


def tool_parameters(tool: dict[str, Any]) -> dict[str, Any]:
    """JSON schema of a tool's parameters."""
    return (tool.get("function") or tool).get("parameters") or {"type": "object", "properties": {}}


def validate_call(call: ToolCall, tools: dict[str, dict[str, Any]]) -> ToolCallError | None:
    """Check ``call`` against the allow-list ``tools`` (name -> OpenAI schema); ``None`` when valid."""
    if call.name not in tools:
        known = ", ".join(sorted(tools)) or "none"
        return ToolCallError(TOOL_NOT_AVAILABLE, f"no tool named {call.name!r}; available tools: {known}", name=call.name)
    schema = tool_parameters(tools[call.name])
    try:
        jsonschema.validate(call.arguments, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
        return ToolCallError(INVALID_PARAMETERS, f"{call.name}: {where}: {exc.message}", name=call.name)
    except jsonschema.SchemaError as exc:  # a broken schema in the data, not the agent's fault
        return ToolCallError(INVALID_PARAMETERS, f"{call.name}: the tool's schema is invalid ({exc.message})", name=call.name)
    return None


def error_payload(error: ToolCallError) -> dict[str, Any]:
    """The JSON result returned to the agent for a failed call."""
    return {"error_tool_call": {"code": error.code, "message": error.message, "details": error.raw[:300]}}


def render_tool_results(results: list[tuple[str, Any]]) -> str:
    """Serialise (tool name, result) pairs as the observation text.

    Each result is a ``<tool_response>`` block holding JSON, the way Qwen/Hermes chat templates
    render tool messages, so the observation can be shown to a model as is.
    """
    blocks = []
    for name, result in results:
        body = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        blocks.append(f"<tool_response>\n{json.dumps({'name': name, 'content': body}, ensure_ascii=False)}\n</tool_response>")
    return "\n".join(blocks)

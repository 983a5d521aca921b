"""The simulator's output contract and its strict parser.

A simulator generation must be, with nothing else around it but whitespace::

    <think>optional reasoning</think>
    <execution_result>
    {"a": "non-empty JSON object"}          (or a non-empty JSON array)
    </execution_result>

:func:`parse_execution_result` accepts exactly that and nothing else. Anything outside the
contract (no block, two blocks, text after the block, a missing newline, an empty object, a
scalar, ``NaN``, invalid JSON) becomes an ``error_tool_call`` result with the code
:data:`INVALID_SIMULATOR_OUTPUT`, which - like every error result - ends an EnvACE episode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

INVALID_SIMULATOR_OUTPUT = "INVALID_SIMULATOR_OUTPUT"
"""Code of the error result given when a simulator generation breaks the output contract."""
SIMULATOR_FAILED = "SIMULATOR_FAILED"
"""Code of the error result given when the world-model backend could not generate at all."""

_CONTRACT = re.compile(
    r"\A\s*(?:<think>(?P<think>.*?)</think>\s*)?<execution_result>\n(?P<body>.*?)\n</execution_result>\s*\Z",
    re.DOTALL,
)
_TAGS = ("<think>", "</think>", "<execution_result>", "</execution_result>")


@dataclass(frozen=True)
class ParsedResult:
    """What a simulator generation amounts to.

    Attributes:
        result: the JSON result (the contract's body), or an ``error_tool_call`` payload.
        valid: True when the generation met the output contract.
        thinking: the ``<think>`` text, when there was one.
        reason: why the generation broke the contract ("" when valid).
    """

    result: Any
    valid: bool
    thinking: str | None = None
    reason: str = ""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def contract_error(code: str, message: str, details: str = "") -> dict[str, Any]:
    """An ``error_tool_call`` payload (the same shape as the tool-call protocol's errors)."""
    return {"error_tool_call": {"code": code, "message": message, "details": details[:300]}}


def _invalid(reason: str, text: str) -> ParsedResult:
    message = (
        f"the simulator output breaks the contract: {reason}. Expected optional <think>...</think>, then "
        "<execution_result>, a newline, a non-empty JSON object or array, a newline and </execution_result>."
    )
    return ParsedResult(contract_error(INVALID_SIMULATOR_OUTPUT, message, text[-300:] if isinstance(text, str) else ""), False, reason=reason)


def parse_execution_result(text: Any) -> ParsedResult:
    """Parse one simulator generation strictly; never raises.

    Returns the JSON body when ``text`` meets the contract, else an ``error_tool_call``
    payload with code :data:`INVALID_SIMULATOR_OUTPUT` and ``valid=False``.
    """
    if not isinstance(text, str):
        return _invalid(f"the output is a {type(text).__name__}, not text", "")
    match = _CONTRACT.match(text)
    if match is None:
        return _invalid("no single <execution_result> block in the required layout", text)
    think, body = match.group("think"), match.group("body")
    if think is not None and any(tag in think for tag in _TAGS):
        return _invalid("the <think> block contains contract tags", text)
    if any(tag in body for tag in _TAGS):
        return _invalid("more than one <execution_result> block", text)
    try:
        value = json.loads(body, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        return _invalid(f"the body is not valid JSON ({exc})", text)
    if not isinstance(value, (dict, list)):
        return _invalid(f"the body is a JSON {type(value).__name__}, not an object or array", text)
    if not value:
        return _invalid("the body is an empty JSON object or array", text)
    return ParsedResult(value, True, thinking=think.strip() if think is not None else None)


def format_execution_result(result: Any, thinking: str | None = None) -> str:
    """The contract text for ``result`` (a non-empty dict or list): the inverse of the parser."""
    body = json.dumps(result, ensure_ascii=False).replace("<", "\\u003c")  # "<" only occurs inside strings
    block = "<execution_result>\n" + body + "\n</execution_result>"
    return (f"<think>{thinking}</think>\n" if thinking is not None else "") + block


def is_error_result(result: Any) -> bool:
    """True for results that report a failure: ``error_tool_call`` payloads and ``{"error": ...}``."""
    return isinstance(result, dict) and ("error_tool_call" in result or (len(result) == 1 and "error" in result))


def ends_episode(result: Any) -> bool:
    """True for ``error_tool_call`` payloads: the results that end an EnvACE episode."""
    return isinstance(result, dict) and "error_tool_call" in result

"""What the tau2 agent reads: its system prompt and the text of each tool result, built as τ²-bench builds them.

The system prompt is upstream's two blocks: an ``<instructions>`` block (the agent is a
customer-service agent following the policy; each turn is either one message to the user or one
tool call) followed by the domain policy in a ``<policy>`` block. The tool schemas reach the
model the way the agent's backend sends tools (the API's ``tools`` field, or the chat
template), not in the prompt.

A tool result is the tool's return value as JSON text (records in their type's field order, other
numbers and booleans written as strings, as upstream renders them; see
:mod:`~agentgym_suite.envs.tau2.record_shapes`), or ``Error: <message>`` when the tool refused.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym_suite.envs.tau2.record_shapes import Shape, rendered

AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n"
    "\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)
"""The agent instructions of τ²-bench's LLM agent (the wording is the benchmark's prompt, kept verbatim)."""


def agent_system_prompt(policy: str) -> str:
    """The agent's system prompt for a domain ``policy``: the instruction block, then the policy block."""
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def tool_result_text(value: Any, shapes: tuple[Shape, ...] = ()) -> str:
    """The text the agent sees for a tool's return value (see :func:`~.record_shapes.rendered`)."""
    if isinstance(value, str):
        return value
    return json.dumps(rendered(value, shapes), default=str)


def tool_error_text(message: str) -> str:
    """The text the agent sees when a tool refused with ``message``."""
    return f"Error: {message}"

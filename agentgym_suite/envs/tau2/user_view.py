"""What τ²-bench's LLM customer reads: its own side of the conversation, as upstream's user simulator sends it.

Upstream (``tau2.user.user_simulator.UserSimulator``) keeps the customer's history in its
``UserState``: the agent's text messages it was sent, its own messages (text, tool calls or
both) and the results of its own tool calls. Before each model call it flips the roles
(``UserState.flip_roles``: the agent speaks as ``user``, the customer as ``assistant`` with its
``tool_calls``, its tool results stay ``tool`` messages) and converts them with
``tau2.utils.llm_utils.to_litellm_messages``; the customer's tools go in the request's ``tools``
field. This module reproduces that list exactly (checked by ``tests/conformance/test_tau2_user_view.py``).

A *view* is the customer's history in upstream's un-flipped form, as plain dicts:

* ``{"role": "assistant", "content": text}``: a text message of the agent;
* ``{"role": "user", "content": text | None, "tool_calls": [{"id", "name", "arguments"}] | None}``:
  the customer's own message;
* ``{"role": "tool", "id": call_id, "content": text, "requestor": "user"}``: the answer to one of
  the customer's tool calls, as upstream's environment renders it.
"""

from __future__ import annotations

import json
from typing import Any

AGENT_GREETING = "Hi! How can I help you today?"
"""τ²-bench's fixed first agent turn; the simulated customer answers it with their opening message."""


def customer_call_id(number: int) -> str:
    """The id the suite gives the customer's ``number``-th tool call of an episode (upstream takes the model's)."""
    return f"user_call_{number}"


def calls_made(view: list[dict[str, Any]]) -> int:
    """How many tool calls the customer has made in ``view``."""
    return sum(len(m.get("tool_calls") or []) for m in view if m.get("role") == "user")


def flipped(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``view`` as upstream sends it to the customer's model (``flip_roles`` then ``to_litellm_messages``).

    Raises:
        ValueError: for an agent message with tool calls or a tool result not meant for the
            customer, which upstream refuses in the same place.
    """
    out: list[dict[str, Any]] = []
    for message in view:
        role = message.get("role")
        if role == "user":
            calls = message.get("tool_calls")
            out.append({"role": "assistant", "content": message.get("content"),
                        "tool_calls": None if calls is None else [
                            {"id": c["id"], "name": c["name"],
                             "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})},
                             "type": "function"} for c in calls]})
        elif role == "assistant":
            if message.get("tool_calls") is not None:
                raise ValueError(f"the customer's view cannot hold the agent's tool calls: {message}")
            out.append({"role": "user", "content": message.get("content")})
        elif role == "tool":
            if message.get("requestor", "assistant") != "user":
                raise ValueError(f"the customer's view holds only the results of its own tool calls: {message}")
            out.append({"role": "tool", "content": message.get("content"), "tool_call_id": message.get("id")})
        else:
            raise ValueError(f"unknown role in the customer's view: {role!r}")
    return out


def customer_messages(system_prompt: str, view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of one customer model call: the system prompt, then the flipped view."""
    return [{"role": "system", "content": system_prompt}, *flipped(view)]


def belongs_to_customer(message: dict[str, Any]) -> bool:
    """Upstream's ``is_valid_user_history_message`` for a message of a task's pre-filled history."""
    role = message.get("role")
    return (role == "user" or (role == "assistant" and message.get("tool_calls") is None)
            or (role == "tool" and message.get("requestor", "assistant") == "user"))


def opening_view(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The customer's view at the start of an episode whose task has a pre-filled ``history`` (its messages
    as the task file writes them); empty without one (the greeting is then the first agent message).

    Upstream seeds the user state with the history's customer messages and hands it the last one when it is
    the customer's turn; either way the customer ends up holding every history message that is its own.
    """
    view: list[dict[str, Any]] = []
    for message in history:
        if not belongs_to_customer(message):
            continue
        role = message["role"]
        if role == "tool":
            view.append({"role": "tool", "id": str(message.get("id", "")), "content": message.get("content"),
                         "requestor": "user"})
        elif role == "user":
            calls = message.get("tool_calls")
            view.append({"role": "user", "content": message.get("content"), "tool_calls": None if calls is None else [
                {"id": str(c.get("id", "")), "name": c["name"], "arguments": dict(c.get("arguments") or {})} for c in calls]})
        else:
            view.append({"role": "assistant", "content": message.get("content")})
    return view


def view_from_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A view rebuilt from an OpenAI-format transcript that carries no customer tool calls (for callers of
    :meth:`~agentgym_suite.envs.tau2.users.LLMUser.reply` that pass no view): the agent's text messages and the
    customer's, opening with the agent greeting when the transcript does not open with an agent message."""
    view: list[dict[str, Any]] = []
    for message in messages:
        role, content = message.get("role"), str(message.get("content") or "")
        if role == "assistant" and content.strip() and not message.get("tool_calls"):
            view.append({"role": "assistant", "content": content})
        elif role == "user":
            view.append({"role": "user", "content": content, "tool_calls": None})
    if not view or view[0]["role"] != "assistant":
        view.insert(0, {"role": "assistant", "content": AGENT_GREETING})
    return view


__all__ = ["AGENT_GREETING", "belongs_to_customer", "calls_made", "customer_call_id", "customer_messages", "flipped",
           "opening_view", "view_from_messages"]

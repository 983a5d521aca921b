"""Simulated tau2 customers: the ``UserSimulator`` protocol, the conversation-ending tokens and the LLM user.

As in τ²-bench, a customer reply that contains ``###STOP###`` (the goal is met),
``###TRANSFER###`` (handed to a human) or ``###OUT-OF-SCOPE###`` (the scenario has no answer)
ends the conversation and the episode is scored. A simulator that fails (a backend error, an
empty reply) raises :class:`UserSimulatorError`; the env then ends the episode unscored-as-lost
(reward 0), as τ²-bench does for a user error. The deterministic stand-in used offline lives in
:mod:`~agentgym_suite.envs.tau2.scripted_user`.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.tool_calls import parse_tool_calls, render_tool_results

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
AGENT_GREETING = "Hi! How can I help you today?"
"""τ²-bench's fixed first agent turn; the simulated customer answers it with their opening message."""


class UserSimulatorError(AgentGymError, RuntimeError):
    """The simulated customer could not produce a message (backend failure, empty reply)."""


@dataclass
class UserContext:
    """What a user simulator sees when it has to answer the agent."""

    task: dict[str, Any]
    messages: list[dict[str, Any]]
    transferred: bool
    user_turns: int
    run_user_tool: Callable[[str, dict[str, Any]], Any] | None = None
    user_tools: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-format schemas of the tools the customer has (telecom's phone); empty in most domains."""


@runtime_checkable
class UserSimulator(Protocol):
    """Plays the customer of a tau2 task."""

    def first_message(self, task: dict[str, Any]) -> str:
        """The customer's opening message."""
        ...

    def reply(self, context: UserContext) -> str:
        """The customer's answer to the agent's latest text message."""
        ...


def end_token(text: str) -> str | None:
    """The conversation-ending token in a customer message, or None (the first one listed in END_TOKENS wins)."""
    return next((token for token in END_TOKENS if token in text), None)


def is_end(text: str) -> bool:
    """True when a customer message ends the conversation."""
    return end_token(text) is not None


def scenario_parts(task: dict[str, Any]) -> dict[str, str]:
    """The user scenario's fields as text: persona, domain, reason, known, unknown, instructions."""
    scenario = task.get("user_scenario") or {}
    instructions = scenario.get("instructions")
    parts = {"persona": str(scenario.get("persona") or "")}
    if isinstance(instructions, dict):
        parts["domain"] = str(instructions.get("domain") or "")
        parts["reason"] = str(instructions.get("reason_for_call") or "")
        parts["known"] = str(instructions.get("known_info") or "")
        parts["unknown"] = str(instructions.get("unknown_info") or "")
        parts["instructions"] = str(instructions.get("task_instructions") or "")
    else:
        parts["reason"] = str(instructions or task.get("ticket") or "")
        parts["domain"] = parts["known"] = parts["unknown"] = parts["instructions"] = ""
    return parts


def scenario_text(task: dict[str, Any]) -> str:
    """The scenario as τ²-bench shows it to its user model: persona, then the instructions block.

    Structured instructions list the domain, the reason for the call, the known and unknown
    information (when given) and the task instructions, each body indented under its label.
    """
    scenario = task.get("user_scenario") or {}
    instructions = scenario.get("instructions")
    lines: list[str] = []
    if scenario.get("persona"):
        lines += ["Persona:", textwrap.indent(str(scenario["persona"]), "\t")]
    if isinstance(instructions, dict):
        body = [f"Domain: {instructions.get('domain') or ''}",
                f"Reason for call:\n{textwrap.indent(str(instructions.get('reason_for_call') or ''), chr(9))}"]
        for key, label in (("known_info", "Known info"), ("unknown_info", "Unknown info")):
            if instructions.get(key) is not None:
                body.append(f"{label}:\n{textwrap.indent(str(instructions[key]), chr(9))}")
        body.append(f"Task instructions:\n{textwrap.indent(str(instructions.get('task_instructions') or ''), chr(9))}")
        text = "\n".join(body)
    else:
        text = str(instructions or task.get("ticket") or "")
    lines += ["Instructions:", textwrap.indent(text, "\t")]
    return "\n".join(lines)


def tool_names(schemas: list[dict[str, Any]]) -> list[str]:
    """The function names of OpenAI-format tool schemas."""
    return [str((s.get("function") or {}).get("name") or s.get("name") or "") for s in schemas if isinstance(s, dict)]


def tools_prompt(schemas: list[dict[str, Any]]) -> str:
    """The system-prompt section that shows a simulated customer their tools and how to call them."""
    listing = "\n".join(json.dumps(schema, ensure_ascii=False) for schema in schemas)
    return ("# Your tools\nYou can use these tools on your own device:\n" + listing + "\nTo use one, write "
            "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>; you will see the result before you answer. "
            "Answer the agent in plain text once you are done with your tools.")


class LLMUser:
    """The τ²-bench customer: a chat model (any callable ``(messages) -> str``) playing the scenario.

    Its system prompt is the domain's simulation guidelines followed by the scenario inside
    ``<scenario>`` tags (see :func:`scenario_text`); the guidelines tell it when to write
    ``###STOP###``, ``###TRANSFER###`` and ``###OUT-OF-SCOPE###``. It sees the conversation with
    roles flipped (the agent speaks as ``user``), opening with τ²-bench's fixed agent greeting.
    A backend failure or an empty reply raises :class:`UserSimulatorError` (kept in ``last_error``).

    When the customer has tools (``context.user_tools``, e.g. telecom's phone), their schemas
    are listed in the system prompt; a reply holding ``<tool_call>`` blocks runs them, the
    results come back as the next (flipped) user message, and the model is asked again, up to
    ``max_tool_rounds`` times per reply. Only the final text reaches the agent.

    Args:
        generate: the chat model.
        guidelines: the simulation guidelines text (``user_simulator/simulation_guidelines*.md``).
        max_tool_rounds: most tool rounds per reply.
        label: how results name this user (e.g. ``llm:hf:Qwen/Qwen3-8B``).
    """

    def __init__(self, generate: Callable[[list[dict[str, Any]]], str], guidelines: str = "", max_tool_rounds: int = 6,
                 label: str | None = None) -> None:
        self.generate = generate
        self.guidelines = guidelines.replace("<PERSONA_GUIDELINES>", "")
        self.max_tool_rounds = max_tool_rounds
        self.label = label or f"llm:{getattr(generate, 'label', None) or getattr(generate, '__name__', 'callable')}"
        self.last_error: str | None = None

    def system_prompt(self, task: dict[str, Any]) -> str:
        """The simulator's system prompt for ``task``."""
        return f"{self.guidelines.strip()}\n\n<scenario>\n{scenario_text(task)}\n</scenario>".strip()

    def _ask(self, messages: list[dict[str, Any]]) -> str:
        try:
            text = str(self.generate(messages) or "").strip()
        except Exception as exc:  # a backend failure ends the episode as a user error, not a crash
            self.last_error = f"{type(exc).__name__}: {exc}"
            raise UserSimulatorError(f"the user model failed: {self.last_error}") from exc
        if not text:
            self.last_error = "the user model returned an empty message"
            raise UserSimulatorError(self.last_error)
        return text

    def first_message(self, task: dict[str, Any]) -> str:
        self.last_error = None
        return self._ask([{"role": "system", "content": self.system_prompt(task)}, {"role": "user", "content": AGENT_GREETING}])

    def reply(self, context: UserContext) -> str:
        flipped: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt(context.task)}]
        for message in context.messages:
            role, content = message.get("role"), str(message.get("content") or "")
            if role == "assistant" and content.strip():
                flipped.append({"role": "user", "content": content})
            elif role == "user":
                flipped.append({"role": "assistant", "content": content})
        if len(flipped) == 1 or flipped[1]["role"] != "user":
            flipped.insert(1, {"role": "user", "content": AGENT_GREETING})
        if context.user_tools and context.run_user_tool is not None:
            flipped[0]["content"] += "\n\n" + tools_prompt(context.user_tools)
            return self._with_tools(flipped, context)
        return self._ask(flipped)

    def _with_tools(self, flipped: list[dict[str, Any]], context: UserContext) -> str:
        """Ask the model, running its tool calls on the customer's side, until it answers in plain text."""
        text = ""
        for _ in range(max(1, self.max_tool_rounds)):
            text = self._ask(flipped)
            parsed = parse_tool_calls(text)
            if not parsed.has_tool_calls or is_end(text):
                return text
            results: list[tuple[str, Any]] = [(e.name or "invalid_tool_call", {"error": e.message}) for e in parsed.errors]
            for call in parsed.calls:  # run as upstream runs the customer's calls: unchecked, the tool answers
                try:
                    results.append((call.name, context.run_user_tool(call.name, call.arguments)))  # type: ignore[misc]
                except ValueError as exc:
                    results.append((call.name, {"error": str(exc)}))
            flipped = flipped + [{"role": "assistant", "content": text}, {"role": "user", "content": render_tool_results(results)}]
        return parse_tool_calls(text).content.strip() or "Sorry, I need a moment; I could not finish checking my phone."


__all__ = ["AGENT_GREETING", "END_TOKENS", "LLMUser", "OUT_OF_SCOPE", "STOP", "TRANSFER", "UserContext", "UserSimulator",
           "UserSimulatorError", "end_token", "is_end", "scenario_parts", "scenario_text", "tool_names", "tools_prompt"]

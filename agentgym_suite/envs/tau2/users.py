"""Simulated tau2 customers: the ``UserSimulator`` protocol, the conversation-ending tokens and the LLM user.

As in τ²-bench, a customer reply that contains ``###STOP###`` (the goal is met),
``###TRANSFER###`` (handed to a human) or ``###OUT-OF-SCOPE###`` (the scenario has no answer)
ends the conversation and the episode is scored. A simulator that fails (a backend error, an
empty reply) raises :class:`UserSimulatorError`; the env then ends the episode unscored-as-lost
(reward 0), as τ²-bench does for a user error. The deterministic stand-in used offline lives in
:mod:`~agentgym_suite.envs.tau2.scripted_user`.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.tool_calls import parse_tool_calls
from agentgym_suite.envs.tau2.prompts import tool_error_text
from agentgym_suite.envs.tau2.user_view import AGENT_GREETING, calls_made, customer_call_id, customer_messages, view_from_messages
from agentgym_suite.llm.chat_templates import hermes_messages

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)


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
    """Runs a customer tool and returns its value (raises ValueError on a refusal); what scripted customers use."""
    user_tools: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-format schemas of the tools the customer has (telecom's phone); empty in most domains."""
    customer_view: list[dict[str, Any]] = field(default_factory=list)
    """The customer's own history as upstream's user state holds it (:mod:`~agentgym_suite.envs.tau2.user_view`): the
    env adds the agent's text messages and the customer's replies, an LLM customer its tool calls and their results."""
    call_user_tools: Callable[[list[tuple[str, dict[str, Any]]]], list[tuple[str, bool]]] | None = None
    """Runs the tool calls of one customer message (name, arguments) and returns each result as upstream's
    environment renders it, with whether it failed."""


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


def _accepts_tools(generate: Callable[..., str]) -> bool:
    """True when a chat callable takes the tool schemas as a ``tools`` keyword (as :class:`BackendChat` does)."""
    try:
        parameters = inspect.signature(generate).parameters
    except (TypeError, ValueError):
        return False
    return "tools" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


class LLMUser:
    """The τ²-bench customer: a chat model playing the scenario, shown the conversation as upstream shows it.

    Its system prompt is the domain's simulation guidelines followed by the scenario inside
    ``<scenario>`` tags (see :func:`scenario_text`); the guidelines tell it when to write
    ``###STOP###``, ``###TRANSFER###`` and ``###OUT-OF-SCOPE###``. When the customer has tools
    (``context.user_tools``, e.g. telecom's phone) the guidelines are the tools variant, as upstream
    picks them. Each model call gets exactly the messages upstream's user simulator sends
    (:mod:`~agentgym_suite.envs.tau2.user_view`: roles flipped, the customer's own tool calls as
    ``tool_calls`` and their results as ``tool`` messages in upstream's text, kept for the whole
    episode), with the customer's tool schemas as the request's tools.

    ``generate`` is a chat model: a callable ``(messages, tools=None) -> str`` (such as
    :class:`~agentgym_suite.envs.shared.chat_models.BackendChat`) gets that list and the schemas as
    they are; a plain ``(messages) -> str`` gets them in the Hermes text convention (tools in the
    system message, calls as ``<tool_call>`` blocks, results as ``<tool_response>`` blocks), the way
    a Qwen chat template renders them. The model calls tools by writing ``<tool_call>`` blocks;
    they run on the customer's side (``context.call_user_tools``) and the model is asked again,
    until it answers without a tool call; only that answer reaches the agent. A backend failure or
    an empty reply raises :class:`UserSimulatorError` (kept in ``last_error``).

    Args:
        generate: the chat model.
        guidelines: the simulation guidelines text (``user_simulator/simulation_guidelines.md``).
        max_tool_rounds: most tool rounds per reply (upstream has no such bound; the env's step limit ends
            the episode long before the default).
        label: how results name this user (e.g. ``llm:hf:Qwen/Qwen3-8B``).
        guidelines_tools: the guidelines for a customer with tools (``simulation_guidelines_tools.md``);
            ``guidelines`` when not given.
    """

    def __init__(self, generate: Callable[..., str], guidelines: str = "", max_tool_rounds: int = 100,
                 label: str | None = None, guidelines_tools: str | None = None) -> None:
        self.generate = generate
        self.guidelines = guidelines
        self.guidelines_tools = guidelines if guidelines_tools is None else guidelines_tools
        self.max_tool_rounds = max_tool_rounds
        self.label = label or f"llm:{getattr(generate, 'label', None) or getattr(generate, '__name__', 'callable')}"
        self.last_error: str | None = None
        self._takes_tools = _accepts_tools(generate)

    def system_prompt(self, task: dict[str, Any], with_tools: bool = False) -> str:
        """The simulator's system prompt for ``task`` (upstream's ``SYSTEM_PROMPT`` with the default persona)."""
        guidelines = (self.guidelines_tools if with_tools else self.guidelines).replace("<PERSONA_GUIDELINES>", "")
        return f"{guidelines}\n\n<scenario>\n{scenario_text(task)}\n</scenario>".strip()

    def _ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        try:
            if self._takes_tools:
                reply = self.generate(messages, tools=tools or None)
            else:
                reply = self.generate(hermes_messages(messages, tools or None))
            text = str(reply or "").strip()
        except Exception as exc:  # a backend failure ends the episode as a user error, not a crash
            self.last_error = f"{type(exc).__name__}: {exc}"
            raise UserSimulatorError(f"the user model failed: {self.last_error}") from exc
        if not text:
            self.last_error = "the user model returned an empty message"
            raise UserSimulatorError(self.last_error)
        return text

    def first_message(self, task: dict[str, Any]) -> str:
        """The customer's answer to the agent greeting (no tools: use :meth:`opening` for a customer with tools)."""
        return self.opening(UserContext(task=task, messages=[], transferred=False, user_turns=0,
                                        customer_view=[{"role": "assistant", "content": AGENT_GREETING}]))

    def opening(self, context: UserContext) -> str:
        """The customer's first message of an episode, answering the last agent message of ``context.customer_view``."""
        self.last_error = None
        return self.reply(context)

    def reply(self, context: UserContext) -> str:
        view = context.customer_view if context.customer_view else view_from_messages(context.messages)
        tools = context.user_tools if context.call_user_tools is not None else []
        system = self.system_prompt(context.task, with_tools=bool(tools))
        text = ""
        for _ in range(max(1, self.max_tool_rounds)):
            text = self._ask(customer_messages(system, view), tools)
            parsed = parse_tool_calls(text) if tools else None
            if parsed is None or not parsed.has_tool_calls:
                return text
            self._run_calls(parsed, view, context)
        return parse_tool_calls(text).content.strip() or "Sorry, I need a moment; I could not finish checking my phone."

    @staticmethod
    def _run_calls(parsed: Any, view: list[dict[str, Any]], context: UserContext) -> None:
        """Record the customer's tool-call message in ``view``, run its calls on the customer's side (as upstream:
        unchecked, the tool answers) and record each answer; a block that does not parse is answered with its error."""
        first = calls_made(view)
        calls = [(c.name, dict(c.arguments), None) for c in parsed.calls]
        calls += [(e.name or "invalid_tool_call", {}, e.message) for e in parsed.errors]
        ids = [customer_call_id(first + i) for i in range(len(calls))]
        view.append({"role": "user", "content": parsed.content or None,
                     "tool_calls": [{"id": i, "name": name, "arguments": arguments} for i, (name, arguments, _) in zip(ids, calls)]})
        runnable = [(name, arguments) for name, arguments, problem in calls if problem is None]
        assert context.call_user_tools is not None
        answers = iter(context.call_user_tools(runnable) if runnable else [])
        for call_id, (_, _, problem) in zip(ids, calls):
            content = tool_error_text(problem) if problem is not None else next(answers)[0]
            view.append({"role": "tool", "id": call_id, "content": content, "requestor": "user"})


__all__ = ["AGENT_GREETING", "END_TOKENS", "LLMUser", "OUT_OF_SCOPE", "STOP", "TRANSFER", "UserContext", "UserSimulator",
           "UserSimulatorError", "end_token", "is_end", "scenario_parts", "scenario_text", "tool_names"]

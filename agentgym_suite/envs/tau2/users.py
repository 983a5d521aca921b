"""Simulated users for tau2: the ``UserSimulator`` protocol, a scripted user and an LLM user.

A user reply that contains ``###STOP###`` (goal done), ``###TRANSFER###`` (handed to a
human) or ``###OUT-OF-SCOPE###`` (the scenario has no answer) ends the conversation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from agentgym_suite.core.tool_calls import parse_tool_calls, render_tool_results, validate_call

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
END_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
AGENT_GREETING = "Hi! How can I help you today?"


@dataclass
class UserContext:
    """What a user simulator sees when it has to answer the agent."""

    task: dict[str, Any]
    messages: list[dict[str, Any]]
    goal_reached: bool
    transferred: bool
    user_turns: int
    user_actions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
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


def is_end(text: str) -> bool:
    """True when a user message ends the conversation."""
    return any(token in text for token in END_TOKENS)


def scenario_parts(task: dict[str, Any]) -> dict[str, str]:
    """The user scenario's fields as text: persona, reason, known, unknown, instructions."""
    scenario = task.get("user_scenario") or {}
    instructions = scenario.get("instructions")
    parts = {"persona": str(scenario.get("persona") or "")}
    if isinstance(instructions, dict):
        parts["reason"] = str(instructions.get("reason_for_call") or "")
        parts["known"] = str(instructions.get("known_info") or "")
        parts["unknown"] = str(instructions.get("unknown_info") or "")
        parts["instructions"] = str(instructions.get("task_instructions") or "")
    else:
        parts["reason"] = str(instructions or task.get("ticket") or "")
        parts["known"] = parts["unknown"] = parts["instructions"] = ""
    return parts


def scenario_text(task: dict[str, Any]) -> str:
    """The whole scenario as one block of text for a simulator prompt."""
    parts = scenario_parts(task)
    labels = (("persona", "Persona"), ("reason", "Reason for the call"), ("known", "Known information"),
              ("unknown", "Unknown information"), ("instructions", "Instructions"))
    return "\n".join(f"{label}: {parts[key]}" for key, label in labels if parts[key].strip() and parts[key].strip() != ".")


DEVICE_REQUEST = "Please do this on your phone:"


def device_instruction(name: str, arguments: dict[str, Any]) -> str:
    """An agent message asking the customer to run user-side tool ``name`` (the form :class:`ScriptedUser` follows)."""
    args = f" {json.dumps(arguments, ensure_ascii=False)}" if arguments else ""
    return f"{DEVICE_REQUEST} {name}{args}"


def tool_names(schemas: list[dict[str, Any]]) -> list[str]:
    """The function names of OpenAI-format tool schemas."""
    return [str((s.get("function") or {}).get("name") or s.get("name") or "") for s in schemas if isinstance(s, dict)]


def requested_user_actions(text: str, names: list[str], task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The user-side tool calls an agent message asks for, in the order the message names them.

    A tool is requested when its name appears in the message as a word. A JSON object right
    after the name gives the arguments; without one, the arguments of the task's first
    expected user action of that name are used (the customer knows their own scenario), or
    none. Each (name, arguments) pair is taken once per message.
    """
    names = [n for n in names if n]
    if not names or not text:
        return []
    golds = [a for a in (task.get("evaluation_criteria") or {}).get("actions") or [] if a.get("requestor") == "user"]
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    decoder = json.JSONDecoder()
    out: list[tuple[str, dict[str, Any]]] = []
    for match in pattern.finditer(text):
        name = match.group(1)
        rest = text[match.end():].lstrip()
        arguments: Any = None
        if rest.startswith("{"):
            try:
                arguments, _ = decoder.raw_decode(rest)
            except ValueError:
                arguments = None
        if not isinstance(arguments, dict):
            arguments = next((dict(g.get("arguments") or {}) for g in golds if g.get("name") == name), {})
        if (name, arguments) not in out:
            out.append((name, arguments))
    return out


def tools_prompt(schemas: list[dict[str, Any]]) -> str:
    """The system-prompt section that shows a simulated customer their tools and how to call them."""
    listing = "\n".join(json.dumps(schema, ensure_ascii=False) for schema in schemas)
    return ("# Your tools\nYou can use these tools on your own device:\n" + listing + "\nTo use one, write "
            "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>; you will see the result before you answer. "
            "Answer the agent in plain text once you are done with your tools.")


class ScriptedUser:
    """Offline user that replays the task's scenario without a model (deterministic).

    Opens with the reason for the call and the known information; afterwards it ends the
    conversation (``###STOP###``) as soon as the task's expected actions and required
    information have been carried out, answers ``###TRANSFER###`` after a transfer, agrees
    when the agent asks a question or for confirmation, and otherwise restates the next
    piece of its scenario. After ``max_turns`` replies it stops. Before stopping it carries
    out the user-side device actions its scenario asks for (``context.user_actions``).

    When the domain gives the user tools (``context.user_tools``, e.g. telecom's phone), an
    agent message that names some of them is an instruction: the user runs them (see
    :func:`requested_user_actions`) and answers with what the phone showed.
    """

    def __init__(self, max_turns: int = 8) -> None:
        self.max_turns = max_turns

    def first_message(self, task: dict[str, Any]) -> str:
        parts = scenario_parts(task)
        text = " ".join(p for p in (parts["reason"], parts["known"]) if p.strip())
        return text.strip() or "I need some help with my account."

    def reply(self, context: UserContext) -> str:
        if context.transferred:
            return TRANSFER
        last = next((str(m.get("content") or "") for m in reversed(context.messages) if m.get("role") == "assistant"), "")
        if context.run_user_tool is not None:
            requests = requested_user_actions(last, tool_names(context.user_tools), context.task)
            if requests:
                return self._carry_out(requests, context.run_user_tool)
        if context.goal_reached or context.user_turns >= self.max_turns:
            if context.goal_reached and context.run_user_tool is not None:
                for name, arguments in context.user_actions:
                    try:
                        context.run_user_tool(name, arguments)
                    except ValueError:
                        continue
            return STOP
        if "?" in last or "confirm" in last.lower():
            return "Yes, please go ahead."
        parts = scenario_parts(context.task)
        pieces = [p for p in (parts["known"], parts["instructions"], parts["reason"]) if p.strip() and p.strip() != "."]
        if pieces:
            return pieces[context.user_turns % len(pieces)]
        return "Is there anything else you need from me?"

    @staticmethod
    def _carry_out(requests: list[tuple[str, dict[str, Any]]], run: Callable[[str, dict[str, Any]], Any]) -> str:
        reports = []
        for name, arguments in requests:
            try:
                result = run(name, arguments)
            except ValueError as exc:
                reports.append(f"I tried {name} but it did not work: {exc}")
                continue
            reports.append(f"I did {name}. My phone shows: {result}")
        return "\n".join(reports)


class LLMUser:
    """User simulated by a chat model: any callable ``(messages: list[dict]) -> str``.

    The model gets the simulation guidelines and the task's scenario as its system prompt and
    sees the conversation with roles flipped (the agent speaks as ``user``). A failing
    backend ends the conversation with ``###OUT-OF-SCOPE###`` and keeps the error in
    ``last_error`` instead of crashing the episode.

    When the customer has tools (``context.user_tools``, e.g. telecom's phone), their schemas
    are listed in the system prompt; a reply holding ``<tool_call>`` blocks runs them, the
    results come back as the next (flipped) user message, and the model is asked again, up to
    ``max_tool_rounds`` times per reply. Only the final text reaches the agent.
    """

    def __init__(self, generate: Callable[[list[dict[str, Any]]], str], guidelines: str = "", max_tool_rounds: int = 6) -> None:
        self.generate = generate
        self.guidelines = guidelines
        self.max_tool_rounds = max_tool_rounds
        self.last_error: str | None = None
        self._own: list[str] = []

    def _system(self, task: dict[str, Any]) -> str:
        return f"{self.guidelines.strip()}\n\n<scenario>\n{scenario_text(task)}\n</scenario>".strip()

    def _ask(self, messages: list[dict[str, Any]]) -> str:
        try:
            text = str(self.generate(messages) or "").strip()
        except Exception as exc:  # a backend failure is data for the episode, not a crash
            self.last_error = f"{type(exc).__name__}: {exc}"
            return OUT_OF_SCOPE
        return text or OUT_OF_SCOPE

    def first_message(self, task: dict[str, Any]) -> str:
        self._own = []
        self.last_error = None
        text = self._ask([{"role": "system", "content": self._system(task)}, {"role": "user", "content": AGENT_GREETING}])
        self._own.append(text)
        return text

    def reply(self, context: UserContext) -> str:
        flipped: list[dict[str, Any]] = [{"role": "system", "content": self._system(context.task)}]
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
            text = self._with_tools(flipped, context)
        else:
            text = self._ask(flipped)
        self._own.append(text)
        return text

    def _with_tools(self, flipped: list[dict[str, Any]], context: UserContext) -> str:
        """Ask the model, running its tool calls on the customer's side, until it answers in plain text."""
        index = {name: schema for name, schema in zip(tool_names(context.user_tools), context.user_tools)}
        text = OUT_OF_SCOPE
        for _ in range(max(1, self.max_tool_rounds)):
            text = self._ask(flipped)
            parsed = parse_tool_calls(text)
            if not parsed.has_tool_calls or is_end(text):
                return text
            results: list[tuple[str, Any]] = [(e.name or "invalid_tool_call", {"error": e.message}) for e in parsed.errors]
            for call in parsed.calls:
                problem = validate_call(call, index)
                if problem is not None:
                    results.append((call.name, {"error": problem.message}))
                    continue
                try:
                    results.append((call.name, context.run_user_tool(call.name, call.arguments)))  # type: ignore[misc]
                except ValueError as exc:
                    results.append((call.name, {"error": str(exc)}))
            flipped = flipped + [{"role": "assistant", "content": text}, {"role": "user", "content": render_tool_results(results)}]
        return parse_tool_calls(text).content.strip() or "Sorry, I need a moment; I could not finish checking my phone."

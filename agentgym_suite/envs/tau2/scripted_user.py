"""The scripted tau2 customer: an offline, deterministic test double (not a τ² user simulator).

Numbers made with it are not τ² numbers: τ²-bench always plays the customer with a language
model (:class:`~agentgym_suite.envs.tau2.users.LLMUser`, ``user="llm:<spec>"``). The scripted
user exists so that tests, oracle replays and CPU smoke runs need no model.

What it knows:

- the scenario's reason for the call and its known and unknown information;
- the customer's phone tools (telecom, mock), and, for a phone action the agent names without
  arguments, the arguments the scenario expects for it (a customer knows their own situation).

What it never reads: the gold agent actions, the expected outcome, the reward, whether the task
is solved, and the scenario's ``task_instructions`` (directions meant for a simulator that can
reason, which a script cannot follow).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from agentgym_suite.envs.shared.text_overlap import content_words
from agentgym_suite.envs.tau2.users import END_TOKENS, STOP, TRANSFER, UserContext, scenario_parts, tool_names

CONFIRM_REPLY = "Yes, please go ahead."
NOTHING_LEFT_REPLY = "I don't have any other details."
UNKNOWN_REPLY = "Sorry, I don't know that."
DEVICE_REQUEST = "Please do this on your phone:"

_CONFIRMATION = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to|"
    r"is (?:that|this|it) (?:correct|right|ok|okay))\b", re.IGNORECASE)
_OBJECT_BEFORE = frozenset(
    "to for with at about from by of on than into onto upon without toward towards against tell tells told give gives "
    "gave ask asks asked help helps helped send sends sent call calls called let lets contact contacts offer offers "
    "offered show shows showed provide provides remind reminds transfer transfers charge charges refund refunds pay "
    "pays email emails text texts assist assists want wants make makes keep keeps".split())
_PHRASES = ((r"you are", "I am"), (r"you're", "I'm"), (r"you were", "I was"), (r"you've", "I've"), (r"you'd", "I'd"),
            (r"you'll", "I'll"), (r"yourself", "myself"), (r"yours", "mine"), (r"your", "my"))


def to_first_person(text: str) -> str:
    """Rewrite a second-person scenario sentence as the customer would say it.

    ``"You are Olivia and your order arrived"`` -> ``"I am Olivia and my order arrived"``; a bare
    ``you`` becomes ``me`` after a preposition or an object-taking verb and ``I`` otherwise.
    """

    def keep_case(match: re.Match[str], replacement: str) -> str:
        return replacement[0].upper() + replacement[1:] if match.group(0)[0].isupper() else replacement

    for pattern, replacement in _PHRASES:
        text = re.sub(rf"\b{pattern}\b", lambda m, r=replacement: keep_case(m, r), text, flags=re.IGNORECASE)

    def bare_you(match: re.Match[str]) -> str:
        before = text[: match.start()].rstrip().split()
        previous = before[-1].lower().strip(",.;:") if before else ""
        return "me" if previous in _OBJECT_BEFORE else "I"

    return re.sub(r"\byou\b", bare_you, text, flags=re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (empty and ``.``-only pieces dropped)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text or "") if s.strip() and s.strip() != "."]


def device_instruction(name: str, arguments: dict[str, Any]) -> str:
    """An agent message asking the customer to run phone tool ``name`` (the form :class:`ScriptedUser` follows)."""
    args = f" {json.dumps(arguments, ensure_ascii=False)}" if arguments else ""
    return f"{DEVICE_REQUEST} {name}{args}"


def requested_user_actions(text: str, names: list[str], task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The phone-tool calls an agent message asks for, in the order the message names them.

    A tool is requested when its name appears in the message as a word. A JSON object right
    after the name gives the arguments; without one, the arguments of the scenario's first
    expected customer action of that name are used (the customer knows their own situation),
    or none. Each (name, arguments) pair is taken once per message.
    """
    names = [n for n in names if n]
    if not names or not text:
        return []
    expected = [a for a in (task.get("evaluation_criteria") or {}).get("actions") or [] if a.get("requestor") == "user"]
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
            arguments = next((dict(a.get("arguments") or {}) for a in expected if a.get("name") == name), {})
        if (name, arguments) not in out:
            out.append((name, arguments))
    return out


class ScriptedUser:
    """Deterministic customer for offline runs; see the module docstring for what it knows.

    Replies, in order of precedence:

    1. after a successful transfer to a human: ``###TRANSFER###``;
    2. a message naming phone tools: runs them and reports what the phone showed;
    3. after ``max_turns`` replies: ``###STOP###``;
    4. a confirmation request ("shall I…", "please confirm", "proceed?"): ``Yes, please go ahead.``;
    5. another question: the not yet given sentence of its known information that shares the
       most words with the question, in the first person (progressive disclosure); when the
       question matches its unknown information better: ``Sorry, I don't know that.``; when
       everything has been said: ``I don't have any other details.``;
    6. a message without a question: ``###STOP###`` (the customer takes it as the end of the service).

    It opens with the reason for the call in the first person, nothing else.
    """

    label = "scripted"

    def __init__(self, max_turns: int = 8) -> None:
        self.max_turns = max_turns

    def first_message(self, task: dict[str, Any]) -> str:
        reason = scenario_parts(task)["reason"]
        for token in END_TOKENS:  # free-text instructions (banking) tell the simulator how to end: not an opening line
            reason = reason.replace(token, "")
        reason = reason.strip()
        return to_first_person(reason) if reason and reason != "." else "I need some help with my account."

    def reply(self, context: UserContext) -> str:
        if context.transferred:
            return TRANSFER
        last = next((str(m.get("content") or "") for m in reversed(context.messages) if m.get("role") == "assistant"), "")
        if context.run_user_tool is not None:
            requests = requested_user_actions(last, tool_names(context.user_tools), context.task)
            if requests:
                return self._carry_out(requests, context.run_user_tool)
        if context.user_turns >= self.max_turns:
            return STOP
        if _CONFIRMATION.search(last):
            return CONFIRM_REPLY
        if "?" in last:
            return self._answer(last, context)
        return STOP

    def _answer(self, question: str, context: UserContext) -> str:
        parts = scenario_parts(context.task)
        said = " ".join(str(m.get("content") or "") for m in context.messages if m.get("role") == "user")
        asked = content_words(question)
        pending = [s for s in (to_first_person(s) for s in sentences(parts["known"])) if s not in said]
        unknown = max((len(asked & content_words(s)) for s in sentences(parts["unknown"])), default=0)
        if not pending:
            return UNKNOWN_REPLY if unknown else NOTHING_LEFT_REPLY
        overlaps = [len(asked & content_words(s)) for s in pending]
        best = max(range(len(pending)), key=lambda i: overlaps[i])
        if unknown > overlaps[best]:
            return UNKNOWN_REPLY
        return pending[best]

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


__all__ = ["CONFIRM_REPLY", "DEVICE_REQUEST", "NOTHING_LEFT_REPLY", "UNKNOWN_REPLY", "ScriptedUser", "content_words",
           "device_instruction", "requested_user_actions", "sentences", "to_first_person"]

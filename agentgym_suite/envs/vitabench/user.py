"""Simulated users for VitaBench: a scripted offline user and an LLM-backed one.

A user simulator answers the agent's text messages; a reply containing :data:`STOP` ends
the conversation. For a 2.0 subtask (a task with an ``instruction``) both open with the
instruction itself, as upstream's personalization user does, and a proactive subtask's user
holds back its ``user_intention`` until the agent asks about it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Protocol

from agentgym_suite.envs.shared.text_overlap import content_words
from agentgym_suite.envs.vitabench.personalization import is_proactive, user_system_prompt

STOP = "###STOP###"
GREETING = {"english": "Hello, how can I help you?", "chinese": "你好，请问需要什么服务？"}
"""The agent's opening line upstream's orchestrator puts first in every 1.0 conversation."""
ChatFn = Callable[[list[dict[str, Any]]], str]

VAGUE_REPLY = "Whatever you think is best."
ACCEPT_REPLY = "Yes, that works. Please go ahead."
DONE_REPLY = f"Thanks, that is all. {STOP}"
_IDENTITY = re.compile(r"\b(user ?id|account|phone number|identity|who are you)\b", re.IGNORECASE)
_ANYTHING_ELSE = re.compile(r"\b(anything else|something else|any other)\b", re.IGNORECASE)
_CONFIRMATION = re.compile(r"\b(confirm|proceed|go ahead|how about|is (?:that|this) (?:ok|okay|fine|right))\b|"
                           r"(?:^|[.!?]\s+)(?:shall i|should i|can i|may i|would you like|do you want)\b", re.IGNORECASE)


class UserSimulator(Protocol):
    """What the env needs from a simulated user."""

    def start(self, task: dict[str, Any]) -> str:
        """The user's opening message for ``task``."""

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """The user's answer to the conversation so far (OpenAI format, agent view); may contain STOP."""


def is_v2(task: dict[str, Any]) -> bool:
    """True for a VitaBench 2.0 subtask (it has an ``instruction`` and a ``sequence_id``)."""
    return "instruction" in task and "sequence_id" in task


def asks_about(question: str, intention: str) -> bool:
    """True when ``question`` is about ``intention``: they share a content word (stop words left out, endings trimmed)."""
    return bool(content_words(question) & content_words(intention))


class ScriptedUser:
    """Offline user (deterministic).

    VitaBench 1.0 tasks: opens with the task's full instructions, gives its user id when asked
    (the agent's prompt does not carry it), confirms once, then stops (after the first agent
    text that follows a tool call, or the ``patience``-th text).

    2.0 subtasks: opens with the vague instruction only. To a question it answers, in order:
    with its held-back intention when the subtask is proactive and the question is about it
    (see :func:`asks_about`), with its user id when asked for identity, with acceptance when
    asked to confirm a recommendation, and vaguely otherwise ("Whatever you think is best."),
    as upstream's user is told to. "Anything else?", a text without a question once the agent
    has used a tool (or after ``patience`` texts), or more than ``max_turns`` replies end the
    conversation.
    """

    label = "scripted"

    def __init__(self, patience: int = 2, max_turns: int = 10) -> None:
        self.patience = patience
        self.max_turns = max_turns
        self._texts = 0
        self._task: dict[str, Any] = {}
        self._revealed = False

    def start(self, task: dict[str, Any]) -> str:
        """Open with the instruction (2.0) or the full instructions (1.0)."""
        self._texts, self._task, self._revealed = 0, task, False
        if is_v2(task):
            return str(task.get("instruction", "")).strip()
        return f"Hi. {str(task.get('instructions', '')).strip()} Please take care of it for me."

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """Answer the agent's latest text."""
        self._texts += 1
        acted = any(m.get("role") == "tool" for m in messages)
        last = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "assistant"), "")
        if not is_v2(self._task):
            if "?" in last and _IDENTITY.search(last):  # the agent is not told the user id; the user knows it
                return f"My user ID is {(self._task.get('environment') or {}).get('user_id', '')}."
            if acted or self._texts >= self.patience:
                return DONE_REPLY
            return "Yes, I confirm. Please go ahead and place it for me with what you found."
        if self._texts > self.max_turns or ("?" in last and _ANYTHING_ELSE.search(last)):
            return DONE_REPLY
        if "?" in last:
            intention = str(self._task.get("user_intention") or "")
            if is_proactive(self._task) and intention and not self._revealed and asks_about(last, intention):
                self._revealed = True
                return intention
            if _IDENTITY.search(last):
                return f"My user ID is {self._task.get('user_id', '')}."
            if _CONFIRMATION.search(last):
                return ACCEPT_REPLY
            return VAGUE_REPLY
        if acted or self._texts >= self.patience:
            return DONE_REPLY
        return "Please go ahead."


class LLMUser:
    """User played by a chat model ``generate(messages) -> str``.

    1.0 tasks use upstream's user prompt (``prompts/user_system_prompt.yaml``, filled with the
    persona and instructions) and let the model open. 2.0 subtasks open with the instruction
    itself and answer with the personalization user prompt
    (:func:`~agentgym_suite.envs.vitabench.personalization.user_system_prompt`).
    """

    def __init__(self, generate: ChatFn, system_template: str, label: str | None = None, language: str = "english") -> None:
        self.generate = generate
        self.language = language
        self.system_template = system_template
        self.label = label or f"llm:{getattr(generate, 'label', None) or getattr(generate, '__name__', 'callable')}"
        self._system = ""

    def start(self, task: dict[str, Any]) -> str:
        """The opening message: the instruction (2.0), or the model's first line (1.0)."""
        if is_v2(task):
            self._system = user_system_prompt(task)
            return str(task.get("instruction", "")).strip()
        # upstream fills the persona with the profile's Python text form
        persona = str((task.get("user_scenario") or {}).get("user_profile") or {})
        self._system = self.system_template.replace("{persona}", persona).replace("{instructions}", str(task.get("instructions", "")))
        return self.generate([{"role": "system", "content": self._system}, {"role": "user", "content": GREETING[self.language]}])

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """Answer with roles flipped: the agent's texts are the model's user turns."""
        flipped: list[dict[str, Any]] = [{"role": "system", "content": self._system}]
        for m in messages:
            if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls"):
                flipped.append({"role": "user", "content": m["content"]})
            elif m.get("role") == "user":
                flipped.append({"role": "assistant", "content": m["content"]})
        return self.generate(flipped)


__all__ = ["ACCEPT_REPLY", "DONE_REPLY", "GREETING", "LLMUser", "STOP", "ScriptedUser", "UserSimulator", "VAGUE_REPLY", "asks_about", "is_v2"]

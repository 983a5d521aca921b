"""Simulated users for VitaBench: a scripted offline user and an LLM-backed one.

A user simulator answers the agent's text messages; a reply containing :data:`STOP` ends
the conversation.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

STOP = "###STOP###"
ChatFn = Callable[[list[dict[str, Any]]], str]


class UserSimulator(Protocol):
    """What the env needs from a simulated user."""

    def start(self, task: dict[str, Any]) -> str:
        """The user's opening message for ``task``."""

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """The user's answer to the conversation so far (OpenAI format, agent view); may contain STOP."""


class ScriptedUser:
    """Offline user: states the task's instructions, confirms once, then stops.

    After the opening message, the first agent text that follows at least one tool call (or
    the ``patience``-th text overall) gets :data:`STOP`; earlier texts get a confirmation.
    """

    def __init__(self, patience: int = 2) -> None:
        self.patience = patience
        self._texts = 0

    def start(self, task: dict[str, Any]) -> str:
        """Open with the full instructions."""
        self._texts = 0
        return f"Hi. {str(task.get('instructions', '')).strip()} Please take care of it for me."

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """Confirm until the agent has acted, then stop."""
        self._texts += 1
        acted = any(m.get("role") == "tool" for m in messages)
        if acted or self._texts >= self.patience:
            return f"Thanks, that is all. {STOP}"
        return "Yes, I confirm. Please go ahead and place it for me with what you found."


class LLMUser:
    """User played by a chat model ``generate(messages) -> str`` with the upstream user prompt."""

    def __init__(self, generate: ChatFn, system_template: str) -> None:
        self.generate = generate
        self.system_template = system_template
        self._system = ""

    def start(self, task: dict[str, Any]) -> str:
        """Fill the prompt with persona and instructions and ask for the opening message."""
        from agentgym_suite.envs.vitabench.data import persona_text

        self._system = self.system_template.replace("{persona}", persona_text(task)).replace("{instructions}", str(task.get("instructions", "")))
        return self.generate([{"role": "system", "content": self._system}, {"role": "user", "content": "Hello, how can I help you today?"}])

    def reply(self, messages: list[dict[str, Any]]) -> str:
        """Answer with roles flipped: the agent's texts are the model's user turns."""
        flipped: list[dict[str, Any]] = [{"role": "system", "content": self._system}]
        for m in messages:
            if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls"):
                flipped.append({"role": "user", "content": m["content"]})
            elif m.get("role") == "user":
                flipped.append({"role": "assistant", "content": m["content"]})
        return self.generate(flipped)

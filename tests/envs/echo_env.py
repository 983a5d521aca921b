"""A one-tool env for tests of the ``ToolEnv`` hooks and of envs that wrap tool envs."""

from __future__ import annotations

from typing import Any

from agentgym_suite.core.tool_env import Conversation, ToolEnv

ECHO = {"type": "function", "function": {"name": "echo", "description": "Echo the text.",
                                          "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                                         "required": ["text"]}}}


class EchoEnv(ToolEnv):
    """One tool, one task; the handler counts how often it ran."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handled: list[str] = []

    def task_ids(self) -> list[str]:
        return ["only"]

    def oracle(self) -> list[str]:
        echoed = any(record.ok for record in self.tool_log)
        return ([] if echoed else ['<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>']) + ["Done."]

    def _start_conversation(self, task_id: str) -> Conversation:
        def echo(text: str) -> dict[str, str]:
            self.handled.append(text)
            return {"echo": text}

        return Conversation(task="Echo hi.", tools=[ECHO], handlers={"echo": echo}, first_user_message="Echo hi.")

    def _evaluate(self) -> tuple[float, bool]:
        return 1.0, True

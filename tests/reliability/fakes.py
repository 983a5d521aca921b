"""Small envs that misbehave on purpose, registered under test-only ids.

* ``ReliabilityHang-v0`` — open the box, take the key; on ``hang_task`` the second step
  blocks until :data:`RELEASE` is set (a backend that stops answering).
* ``ReliabilityTools-v0`` — a tool env with ``lookup(key)``; the tool raises for the key
  ``"boom"`` and on every call of ``crash_task``.
"""

from __future__ import annotations

import threading
from typing import Any

import gymnasium as gym

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.core.tool_env import Conversation, ToolEnv

HANG_ID = "ReliabilityHang-v0"
TOOLS_ID = "ReliabilityTools-v0"
RELEASE = threading.Event()
"""Set it to let every hung step return (tests do so at teardown)."""


class HangEnv(TextEnv):
    """Two commands solve a task; ``hang_task`` hangs on its second step."""

    benchmark = "fake"
    created = 0

    def __init__(self, *, hang_task: str | None = None, n_tasks: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        HangEnv.created += 1
        self.hang_task = hang_task
        self.n_tasks = n_tasks
        self._opened = False

    def task_ids(self) -> list[str]:
        return [f"task-{i}" for i in range(self.n_tasks)]

    def _load_task(self, task_id: str) -> TaskStart:
        self._opened = False
        return TaskStart(f"A closed box ({task_id}).", "take the key",
                         admissible_actions=["open box", "take key", "look"])

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self.task_id == self.hang_task and self.turn >= 2:
            RELEASE.wait(120)
        if command == "open box":
            self._opened = True
            return StepOutcome("The box opens.", 0.0, 0.5)
        if command == "take key" and self._opened:
            return StepOutcome("You take the key.", 1.0, 1.0, won=True, terminated=True)
        if command in ("open box", "take key", "look"):
            return StepOutcome("Nothing happens.", 0.0, self._score)
        return StepOutcome(f"Unknown command: {command}", 0.0, self._score, action_valid=False)

    def oracle(self) -> list[str]:
        return ([] if self._opened else ["open box"]) + ["take key"]


LOOKUP_SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a key up.",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
    },
}


class RaisingToolEnv(ToolEnv):
    """Call ``lookup`` with the task's key, then answer; the tool raises on ``boom``/``crash_task``."""

    benchmark = "fake"

    def __init__(self, *, crash_task: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.crash_task = crash_task
        self._found = False

    def task_ids(self) -> list[str]:
        return [f"tool-{i}" for i in range(3)]

    def _lookup(self, key: str) -> dict[str, Any]:
        if key == "boom" or self.task_id == self.crash_task:
            raise RuntimeError(f"the lookup service crashed on {key!r}")
        self._found = key == self.task_id
        return {"value": key.upper()}

    def _start_conversation(self, task_id: str) -> Conversation:
        self._found = False
        return Conversation(task=f"look up {task_id}", tools=[LOOKUP_SCHEMA], handlers={"lookup": self._lookup},
                            first_user_message=f"Please look up {task_id}.")

    def _evaluate(self) -> tuple[float, bool]:
        return (1.0, True) if self._found else (0.0, False)

    def oracle(self) -> list[str]:
        call = f'<tool_call>\n{{"name": "lookup", "arguments": {{"key": "{self.task_id}"}}}}\n</tool_call>'
        return ["Done."] if self._found else [call, "Done."]


def register_fakes() -> None:
    """Register both test ids once."""
    if HANG_ID not in gym.registry:
        gym.register(id=HANG_ID, entry_point=HangEnv, max_episode_steps=6)
    if TOOLS_ID not in gym.registry:
        gym.register(id=TOOLS_ID, entry_point=RaisingToolEnv, max_episode_steps=6)

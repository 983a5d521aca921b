"""A small deterministic TextEnv for evaluation tests, registered as ``FakeEval-v0``.

Each task needs two commands (``open box``, then ``take KEY``); other admissible commands do
nothing. ``crash_task`` makes ``_execute`` raise on that task's second action; ``script_action``
makes every observation echo the action (to test escaping in the viewer).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv

FAKE_ID = "FakeEval-v0"
KEYS = ("red", "blue", "green", "gold", "iron", "jade")


class FakeEvalEnv(TextEnv):
    """Open the box, take the key."""

    benchmark = "fake"
    created = 0
    """How many instances were built (tests check when the runner replaces a crashed env)."""

    def __init__(self, *, crash_task: str | None = None, n_tasks: int = 6, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        FakeEvalEnv.created += 1
        self.crash_task = crash_task
        self.n_tasks = n_tasks
        self._opened = False
        self._key = ""

    def task_ids(self) -> list[str]:
        return [f"task-{i}" for i in range(self.n_tasks)]

    def _commands(self) -> list[str]:
        return ["look", "open box", f"take {self._key}", "wait"]

    def _load_task(self, task_id: str) -> TaskStart:
        index = int(task_id.split("-")[1])
        self._key = KEYS[index % len(KEYS)]
        self._opened = False
        return TaskStart(
            observation=f"A closed box. Something {self._key} is inside.",
            task=f"take the {self._key} key",
            admissible_actions=self._commands(),
            extra={"task_type": "pick" if index % 2 == 0 else "heat"},
        )

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self.crash_task == self.task_id and self.turn >= 2:
            raise RuntimeError(f"simulated backend crash in {self.task_id}")
        if command == "open box":
            self._opened = True
            return StepOutcome("The box opens.", 0.0, 0.5, admissible_actions=self._commands())
        if command == f"take {self._key}" and self._opened:
            return StepOutcome("You take the key. You won!", 1.0, 1.0, won=True, terminated=True)
        if command in self._commands():
            return StepOutcome(f"Nothing happens after '{command}'.", 0.0, self._score)
        return StepOutcome(f"Unknown command: {command}", 0.0, self._score, action_valid=False)

    def oracle(self) -> list[str]:
        steps = [] if self._opened else ["open box"]
        return [self.format_action(c) for c in steps + [f"take {self._key}"]]


def register_fake_env() -> str:
    """Register ``FakeEval-v0`` once and return its id."""
    if FAKE_ID not in gym.registry:
        gym.register(id=FAKE_ID, entry_point=FakeEvalEnv, max_episode_steps=6)
    return FAKE_ID

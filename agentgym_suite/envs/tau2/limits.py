"""τ²-bench's conversation limits: 200 steps of any role, 10 tool errors, counted as its orchestrator counts them.

A *step* is one message sent: the customer's, the agent's, or the environment's answer to one
message's tool calls (several calls answered together are one step). The opening greeting is not
a step. Every tool result that is an error (the agent's or the customer's) counts towards the
error limit; the count is over the whole conversation, not consecutive errors. The limits are
checked after each step except while a tool call waits for its answer; when one is reached the
conversation ends (``max_steps`` or ``too_many_errors``; the error limit wins when both are) and
scores 0. A customer stop on the step that reaches the step limit also ends as ``max_steps``.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_STEPS = 200
MAX_ERRORS = 10


class ConversationOver(Exception):
    """Raised inside a customer's turn when a limit ended the conversation (not a simulator failure)."""


@dataclass
class StepCounter:
    """Steps and tool errors of one conversation, and the limit reached (if any)."""

    max_steps: int = MAX_STEPS
    max_errors: int = MAX_ERRORS
    steps: int = 0
    errors: int = 0

    def step(self, errors: int = 0) -> None:
        """Count one message sent, and the tool errors it carried."""
        self.steps += 1
        self.errors += errors

    def reached(self) -> str | None:
        """``too_many_errors``, ``max_steps`` or None: the limit reached by now."""
        if self.errors >= self.max_errors:
            return "too_many_errors"
        if self.steps >= self.max_steps:
            return "max_steps"
        return None

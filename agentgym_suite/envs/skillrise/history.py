"""The trajectory text of SkillRise prompts: the last steps of the current task, as the released
trials show them (one ``Action i: …`` line and one ``Observation i: …`` line per step, numbered
from the task's start, the action as projected, the observation the env answered with).

Solve prompts show the last 15 steps, Curate prompts the last 50 (more than a task's turn
limit, so the whole attempt): the history is bounded by steps, never cut by characters, and
the skill document is always shown whole.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

SOLVE_HISTORY = 15
"""Steps of the current task a Solve prompt shows."""
CURATE_HISTORY = 50
"""Steps of the finished task a Curate prompt shows."""


class Step(NamedTuple):
    """One Solve step of a task."""

    action: str
    """The projected action (:func:`~agentgym_suite.envs.skillrise.projection.project_solve_action`)."""
    observation: str
    """The env's answer to it."""
    done: bool = False
    """Whether the task ended on this step."""


def format_history(steps: Sequence[Step], limit: int) -> str:
    """The last ``limit`` steps as text; a step that ended the task is the last one shown."""
    shown = list(steps)[-limit:] if limit > 0 else []
    first = len(steps) - len(shown) + 1
    lines = []
    for number, step in enumerate(shown, start=first):
        lines.append(f"Action {number}: {step.action}\nObservation {number}: {step.observation}")
        if step.done:
            break
    return "\n".join(lines)

"""A finished group: the G episodes of one dispatched task, waiting in the queue to be trained."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agentgym_suite.rollout.records import Trajectory


@dataclass
class FinishedGroup:
    """The G episodes one dispatch played, and the policy version they started under."""

    index: int
    """Dispatch index (:class:`~agentgym_suite.trainers.async_rollouts.tasks.TaskCursor`)."""
    version: int
    """Policy version of the group's first turn: every episode of the group starts under it."""
    episodes: list[Trajectory]
    finished_at: float = field(default_factory=time.monotonic)

    @property
    def task_id(self) -> str:
        """The task the group played."""
        return self.episodes[0].task_id if self.episodes else ""


def group_id(index: int) -> str:
    """The group id of dispatch ``index`` (the same in every checkpoint and log)."""
    return f"a{index}"


def dispatch_index(group: str) -> int:
    """The dispatch index of :func:`group_id`'s ``group``."""
    return int(str(group)[1:])

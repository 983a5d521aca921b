"""The data cursor of asynchronous rollouts: which task the next dispatched group plays.

Group ``d`` (the d-th group ever dispatched, the *dispatch index*) plays the row
``permutation(epoch)[d % N]`` of the training tasks, with ``epoch = d // N`` and a permutation
drawn from the run's seed and the epoch: the order depends on the seed and the index alone, never
on timing. The cursor's state is the next new index and the indices to play again first (groups
that were in flight when a checkpoint was taken; they had not been trained).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from agentgym_suite.rollout.seeding import episode_seed


def task_order(num_tasks: int, seed: int, epoch: int) -> list[int]:
    """The permutation of ``num_tasks`` task rows of one epoch."""
    generator = torch.Generator().manual_seed(episode_seed(int(seed), "async-rollout-task-order", int(epoch)))
    return torch.randperm(num_tasks, generator=generator).tolist()


@dataclass
class TaskCursor:
    """Hands out dispatch indices and the task row each one plays."""

    num_tasks: int
    seed: int
    next_index: int = 0
    """The first dispatch index never handed out."""
    redo: list[int] = field(default_factory=list)
    """Indices handed out before a checkpoint whose groups had not finished: handed out again first."""

    def __post_init__(self) -> None:
        """Refuse an empty task set."""
        if self.num_tasks < 1:
            raise ValueError("asynchronous rollouts need at least one training task.")
        self._orders: dict[int, list[int]] = {}

    def take(self) -> int:
        """The next dispatch index."""
        if self.redo:
            return self.redo.pop(0)
        index, self.next_index = self.next_index, self.next_index + 1
        return index

    def row(self, index: int) -> int:
        """The task row dispatch index ``index`` plays."""
        epoch, position = divmod(int(index), self.num_tasks)
        if epoch not in self._orders:
            self._orders = {epoch: task_order(self.num_tasks, self.seed, epoch)}
        return self._orders[epoch][position]

    def state(self, in_flight: list[int]) -> dict[str, Any]:
        """What a checkpoint keeps: the next new index and every index to play again (``in_flight``,
        then those still waiting from an earlier resume)."""
        return {"next_index": self.next_index, "redo": sorted(set(in_flight) | set(self.redo))}

    def load(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state`."""
        self.next_index = int(state["next_index"])
        self.redo = [int(i) for i in state["redo"]]

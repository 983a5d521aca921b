"""The bounded queue between the rollout thread and the learner, and its bookkeeping.

:class:`AsyncRollouts` is shared by the two threads (one condition variable guards it):

* the rollout thread calls :meth:`~AsyncRollouts.dispatch` (waits while the queue and the groups
  in flight fill its capacity, then hands out the next dispatch indices and their tasks) and
  :meth:`~AsyncRollouts.finish` (puts the played groups in the queue);
* the learner calls :meth:`~AsyncRollouts.take`, which waits for groups, drops those older than
  ``max_staleness`` (counted) and returns the rest, oldest first.

The capacity is ``max(1, max_staleness)`` steps of groups (TRL's ``AsyncGRPOTrainer`` bounds its
tasks in flight the same way): the generator runs at most that far ahead of the learner. The
time each side waits is kept for the idle shares the learner logs per step.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from agentgym_suite.rollout.seeding import episode_seed
from agentgym_suite.trainers.async_rollouts.groups import FinishedGroup
from agentgym_suite.trainers.async_rollouts.policy_snapshot import PolicySnapshot
from agentgym_suite.trainers.async_rollouts.staleness import group_staleness
from agentgym_suite.trainers.async_rollouts.tasks import TaskCursor


@dataclass
class TakeStats:
    """What one :meth:`AsyncRollouts.take` saw."""

    queue_depth: int = 0
    """Groups waiting in the queue when the learner came for them."""
    dropped_groups: int = 0
    dropped_episodes: int = 0
    wait_s: float = 0.0
    """Seconds the learner waited for groups."""
    staleness: list[int] = field(default_factory=list)
    """Staleness of each group taken."""


class AsyncRollouts:
    """Queue, cursor and version bookkeeping of asynchronous rollouts.

    Args:
        tasks: the training task rows (``task_id``, ``env_seed``), indexed by the cursor.
        group_size: G, episodes per group.
        groups_per_run: groups the generator plays in one batched rollout (one step's worth).
        max_staleness: groups older than this many policy versions are dropped.
        continue_episodes: ``async_episode_update: continue`` (new weights at turn boundaries).
        seed: the run's seed (task order and sampling seeds).
        snapshot: the generator's copy of the policy (the first thread's; its ``published`` is the
            learner's newest version).
        threads: rollout threads sharing the queue, each playing one run at a time.
    """

    def __init__(self, tasks: list[dict[str, Any]], *, group_size: int, groups_per_run: int, max_staleness: int,
                 continue_episodes: bool, seed: int, snapshot: PolicySnapshot, threads: int = 1) -> None:
        self.tasks = tasks
        self.group_size = int(group_size)
        self.groups_per_run = int(groups_per_run)
        self.max_staleness = int(max_staleness)
        self.continue_episodes = bool(continue_episodes)
        self.seed = int(seed)
        self.snapshot = snapshot
        self.capacity = max(1, self.max_staleness, int(threads)) * self.groups_per_run
        self.cursor = TaskCursor(len(tasks), self.seed)
        self.queue: deque[FinishedGroup] = deque()
        self.in_flight: set[int] = set()
        self.trained: list[int] = []
        """Dispatch indices handed to training, in order (checkpointed)."""
        self.dropped: list[int] = []
        """Dispatch indices dropped as too stale (checkpointed)."""
        self.stopping = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._generator_idle_s = 0.0
        self._generator_busy_s = 0.0

    # ------------------------------------------------------------------ rollout thread
    def dispatch(self) -> list[tuple[int, dict[str, Any]]] | None:
        """The next groups to play (index, task row), once the queue has room; None when stopping."""
        began = time.monotonic()
        with self._cond:
            while not self.stopping and len(self.queue) + len(self.in_flight) + self.groups_per_run > self.capacity:
                self._cond.wait()
            self._generator_idle_s += time.monotonic() - began
            if self.stopping:
                return None
            batch = []
            for _ in range(self.groups_per_run):
                index = self.cursor.take()
                self.in_flight.add(index)
                batch.append((index, self.tasks[self.cursor.row(index)]))
            return batch

    def finish(self, batch: list[tuple[int, dict[str, Any]]], groups: list[FinishedGroup], *, busy_s: float) -> None:
        """Put the played groups in the queue."""
        with self._cond:
            for index, _ in batch:
                self.in_flight.discard(index)
            self.queue.extend(groups)
            self._generator_busy_s += busy_s
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        """The rollout thread died with ``error``: the learner raises it at its next :meth:`take`."""
        with self._cond:
            self._error = error
            self._cond.notify_all()

    def sampling_seed(self, index: int) -> int:
        """The sampling seed of the rollout that starts with dispatch ``index`` (seed and index only)."""
        return episode_seed(self.seed, "async-rollout-sampling", int(index))

    # ------------------------------------------------------------------ learner
    def take(self, count: int, learner_version: int, *, alive: Callable[[], bool] = lambda: True) -> tuple[
            list[FinishedGroup], TakeStats]:
        """``count`` groups within ``max_staleness`` of ``learner_version``, oldest first; older ones
        are dropped on the way and counted. Waits while the queue is empty."""
        stats = TakeStats()
        began = time.monotonic()
        taken: list[FinishedGroup] = []
        with self._cond:
            stats.queue_depth = len(self.queue)
            while len(taken) < count:
                while not self.queue:
                    if self._error is not None:
                        raise RuntimeError(f"the asynchronous rollout thread failed: {self._error!r}") from self._error
                    if not alive():
                        raise RuntimeError("the asynchronous rollout thread is not running; no group can arrive.")
                    self._cond.wait(timeout=1.0)
                group = self.queue.popleft()
                self._cond.notify_all()  # room in the queue: a rollout thread waiting to dispatch may go on now,
                # before this take has all its groups (else a take that drops stale groups waits forever for
                # threads that wait for room)
                staleness = group_staleness(learner_version, group.version)
                if staleness > self.max_staleness:
                    stats.dropped_groups += 1
                    stats.dropped_episodes += len(group.episodes)
                    self.dropped.append(group.index)
                    continue
                taken.append(group)
                stats.staleness.append(staleness)
                self.trained.append(group.index)
            self._cond.notify_all()
        stats.wait_s = time.monotonic() - began
        return taken, stats

    def generator_idle_share(self) -> float:
        """Share of the rollout thread's time since the last call spent waiting for room in the queue."""
        with self._cond:
            idle, busy = self._generator_idle_s, self._generator_busy_s
            self._generator_idle_s = self._generator_busy_s = 0.0
        return idle / (idle + busy) if idle + busy > 0 else 0.0

    def stop(self) -> None:
        """Tell the rollout thread to stop at its next dispatch or turn boundary."""
        with self._cond:
            self.stopping = True
            self._cond.notify_all()

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """The queue, the data cursor, the policy version and the trained/dropped indices: what a
        resumed run needs to train every task once, none twice."""
        with self._cond:
            return {
                "format": 1,
                "version": int(self.snapshot.published),
                "cursor": self.cursor.state(sorted(self.in_flight)),
                "queue": [group for group in self.queue],
                "trained": list(self.trained),
                "dropped": list(self.dropped),
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict` (before the rollout thread starts)."""
        if int(state.get("format", 0)) != 1:
            raise ValueError(f"unknown asynchronous-rollout checkpoint format {state.get('format')!r}.")
        with self._cond:
            self.cursor.load(state["cursor"])
            self.queue = deque(state["queue"])
            self.trained = list(state["trained"])
            self.dropped = list(state["dropped"])
            self.in_flight = set()

"""The bounded queue between the rollout thread and the learner, and its bookkeeping.

:class:`AsyncRollouts` is shared by the two threads (one condition variable guards it):

* the rollout thread calls :meth:`~AsyncRollouts.dispatch` (waits until a run may start, then
  hands out the next dispatch indices and their tasks) and :meth:`~AsyncRollouts.finish` (puts
  the played groups in the queue);
* the learner calls :meth:`~AsyncRollouts.take`, which waits for groups, drops those older than
  ``max_staleness`` (counted) and returns the rest, in dispatch order;
* the trainer calls :meth:`~AsyncRollouts.publish` once the generator can read a new version.

A run may start when both hold:

* **staleness admission** (AReaL's rule, ``max_head_offpolicyness``: a rollout is submitted only
  while ``submitted < (version + 1 + max_staleness) * batch_size``): a run is not started if its
  last group would be consumed by a learner step more than ``max_staleness`` versions after the
  version it starts under. The learner takes groups in dispatch order, one step's worth
  (``groups_per_run``) per step, so the step that will consume the run's last group is known from
  the groups started before it (queued or in flight) and the groups the learner still needs for
  the step it is on (:meth:`~AsyncRollouts.admits`). Counted from the learner's current demand
  rather than from the run's start, the rule stays right when the learner drops groups, takes
  extra ones (dynamic sampling) or resumes: those only make groups consumed earlier. Groups the
  learner is waiting for now are always admitted (no deadlock); the drop-and-count path stays as
  the safety net for the rest. A run whose groups would all come after the learner's last step
  (``last_step``) is not started either.
* **room**: the queue and the groups in flight hold at most ``max(1, max_staleness, threads)``
  steps of groups (memory; TRL's ``AsyncGRPOTrainer`` bounds its tasks in flight the same way).

The time each side waits is kept for the idle shares the learner logs per step.
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
        """Finished groups, in dispatch order (groups restored from a checkpoint first)."""
        self.in_flight: set[int] = set()
        self.published = int(snapshot.published)
        """The newest policy version the generator can read (runs dispatched now start under it or a later one)."""
        self._order: dict[int, int] = {}
        """Dispatch order of the groups in flight or queued (index -> order); absent: before all others."""
        self._next_order = 0
        self._demand_step = self.published
        """The learner step whose groups the learner takes next (or is taking)."""
        self._demand_left = self.groups_per_run
        """Groups the learner still needs for ``_demand_step``."""
        self._taking = False
        self.last_step: int | None = None
        """The learner's last step + 1 (``max_steps``), when known: no run is started for steps after it."""
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
        """The next groups to play (index, task row), once a run may start (:meth:`admits`); None when stopping."""
        began = time.monotonic()
        with self._cond:
            while not self.stopping and not self._admits():
                self._cond.wait()
            self._generator_idle_s += time.monotonic() - began
            if self.stopping:
                return None
            batch = []
            for _ in range(self.groups_per_run):
                index = self.cursor.take()
                self.in_flight.add(index)
                self._order[index] = self._next_order
                self._next_order += 1
                batch.append((index, self.tasks[self.cursor.row(index)]))
            return batch

    def admits(self) -> bool:
        """Whether a run of ``groups_per_run`` groups may start now (room, and the staleness admission)."""
        with self._cond:
            return self._admits()

    def _admits(self) -> bool:
        ahead = len(self.queue) + len(self.in_flight)  # started before this run: consumed before it
        if ahead + self.groups_per_run > self.capacity:
            return False
        if self._taking and ahead < self._demand_left:
            return True  # the learner waits for these groups now
        if self.last_step is not None and self._consumed_at(ahead) >= self.last_step:
            return False  # the run's groups would come after the learner's last step: never trained
        last = ahead + self.groups_per_run - 1  # the run's last group, counted from the learner's next one
        return self._consumed_at(last) - self.published <= self.max_staleness

    def _consumed_at(self, position: int) -> int:
        """The learner step that takes the group ``position`` places after the learner's next group
        (every group ahead of it taken, one step's worth per step from the current step's remainder on)."""
        if position < self._demand_left:
            return self._demand_step
        return self._demand_step + 1 + (position - self._demand_left) // self.groups_per_run

    def finish(self, batch: list[tuple[int, dict[str, Any]]], groups: list[FinishedGroup], *, busy_s: float) -> None:
        """Put the played groups in the queue, in dispatch order."""
        with self._cond:
            for index, _ in batch:
                self.in_flight.discard(index)
            for group in groups:
                key = self._order.get(group.index, -1)
                position = len(self.queue)
                while position > 0 and self._order.get(self.queue[position - 1].index, -1) > key:
                    position -= 1
                self.queue.insert(position, group)
            self._generator_busy_s += busy_s
            self._cond.notify_all()

    def publish(self, version: int) -> None:
        """The generator can read policy ``version`` now (after every thread was offered it)."""
        with self._cond:
            self.published = int(version)
            self._cond.notify_all()

    def takeable(self) -> int:
        """Groups the learner could take now without waiting (queued before every group in flight)."""
        with self._cond:
            return sum(1 for _ in self._ready_prefix())

    def _ready_prefix(self) -> Any:
        first_in_flight = min((self._order.get(i, -1) for i in self.in_flight), default=None)
        for group in self.queue:
            if first_in_flight is not None and self._order.get(group.index, -1) > first_in_flight:
                return
            yield group

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
        """``count`` groups within ``max_staleness`` of ``learner_version``, in dispatch order; older
        ones are dropped on the way and counted. Waits for the next group in dispatch order (a group
        that finished before an earlier-dispatched one waits for it, so runs are consumed in the
        order the staleness admission counted them)."""
        stats = TakeStats()
        began = time.monotonic()
        taken: list[FinishedGroup] = []
        with self._cond:
            stats.queue_depth = len(self.queue)
            self._demand_step, self._demand_left, self._taking = int(learner_version), int(count), True
            self._cond.notify_all()
            try:
                while len(taken) < count:
                    taken_group = self._take_one(learner_version, stats, alive)
                    if taken_group is not None:
                        taken.append(taken_group)
                        self._demand_left -= 1
            finally:
                self._demand_step, self._demand_left, self._taking = int(learner_version) + 1, self.groups_per_run, False
                self._cond.notify_all()
        stats.wait_s = time.monotonic() - began
        return taken, stats

    def _take_one(self, learner_version: int, stats: TakeStats, alive: Callable[[], bool]) -> FinishedGroup | None:
        """The next group in dispatch order (waits for it), or None when it was too stale and dropped."""
        while next(self._ready_prefix(), None) is None:
            if self._error is not None:
                raise RuntimeError(f"the asynchronous rollout thread failed: {self._error!r}") from self._error
            if not alive():
                raise RuntimeError("the asynchronous rollout thread is not running; no group can arrive.")
            self._cond.wait(timeout=1.0)
        group = self.queue.popleft()
        self._order.pop(group.index, None)
        self._cond.notify_all()  # room in the queue: a rollout thread waiting to dispatch may go on now, before
        # this take has all its groups (else a take that drops stale groups waits forever for threads that wait)
        staleness = group_staleness(learner_version, group.version)
        if staleness > self.max_staleness:
            stats.dropped_groups += 1
            stats.dropped_episodes += len(group.episodes)
            self.dropped.append(group.index)
            return None
        stats.staleness.append(staleness)
        self.trained.append(group.index)
        return group

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
            self._order = {}

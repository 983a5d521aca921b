"""The staleness admission of asynchronous rollouts: a rollout thread never starts a group that
would be older than ``max_staleness`` when the learner takes it, yet generation still overlaps
training, and no rule of it can deadlock the learner.

The scheduling tests drive the real :class:`AsyncRollouts` from one thread through a discrete-event
simulation in virtual time (run and step durations are numbers, not sleeps), so every event order
is deterministic; the trainer test runs the real threads."""

from __future__ import annotations

import threading

import pytest
import torch

from agentgym_suite.rollout import Trajectory
from agentgym_suite.rollout.records import Turn
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.async_rollouts.controller import AsyncRollouts
from agentgym_suite.trainers.async_rollouts.groups import FinishedGroup, group_id
from agentgym_suite.trainers.async_rollouts.policy_snapshot import PolicySnapshot
from trainers.fake_env import make_letter_env

TASKS = [{"task_id": f"t{i}", "env_seed": i} for i in range(5)]
GROUPS = 2
"""Groups per learner step (and per rollout run)."""


def _controller(max_staleness: int, threads: int) -> AsyncRollouts:
    return AsyncRollouts(TASKS, group_size=2, groups_per_run=GROUPS, max_staleness=max_staleness,
                         continue_episodes=False, seed=3, snapshot=PolicySnapshot(torch.nn.Linear(2, 2), 0),
                         threads=threads)


def _group(index: int, version: int) -> FinishedGroup:
    episodes = [Trajectory(task_id="t", group_id=group_id(index), turns=[Turn(0, "", "a", policy_version=version)])
                for _ in range(2)]
    return FinishedGroup(index=index, version=version, episodes=episodes)


def _simulate(max_staleness: int, threads: int, run_times: list[float], learn_time: float, steps: int):
    """Rollout threads and a learner in virtual time over the real controller. A thread starts a run
    whenever the controller admits one (under the version published then); a run takes
    ``run_times[n % len]``; the learner takes a step's groups as soon as they can be taken, trains
    for ``learn_time`` and publishes the next version. Returns the events, in order, the controller
    and the virtual end time."""
    controller = _controller(max_staleness, threads)
    controller.last_step = steps
    events: list[tuple] = []
    playing: list[tuple[float, list, int] | None] = [None] * threads
    runs, now, step, learning_until = 0, 0.0, 0, None
    while step < steps:
        for thread in range(threads):
            if playing[thread] is None and controller.admits():
                batch = controller.dispatch()
                playing[thread] = (now + run_times[runs % len(run_times)], batch, controller.published)
                events.append(("dispatch", [index for index, _ in batch], controller.published, thread))
                runs += 1
        if learning_until is None and controller.takeable() >= GROUPS:
            # alive=False: a take that would have to wait raises instead (no thread would ever feed it)
            taken, stats = controller.take(GROUPS, step, alive=lambda: False)
            events.append(("take", step, [(g.index, g.version) for g in taken], stats.dropped_groups))
            learning_until = now + learn_time
            continue
        pending = [p[0] for p in playing if p is not None] + ([learning_until] if learning_until is not None else [])
        assert pending, f"deadlock at step {step}: no thread plays and the learner waits ({events[-3:]})"
        now = min(pending)
        for thread, play in enumerate(playing):
            if play is not None and play[0] == now:
                playing[thread] = None
                controller.finish(play[1], [_group(index, play[2]) for index, _ in play[1]], busy_s=0.0)
        if learning_until == now:
            step, learning_until = step + 1, None
            controller.publish(step)
            events.append(("publish", step))
    controller.stop()
    return events, controller, now


SCHEDULES = {
    "rollouts_dominate": ([4.0], 2.0),
    "learner_dominates": ([1.0], 3.0),
    "uneven_runs_finish_out_of_order": ([5.0, 2.0, 6.0, 1.0, 4.0, 3.0, 2.5], 1.5),
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_no_group_is_started_that_would_be_too_stale(schedule, threads):
    run_times, learn_time = SCHEDULES[schedule]
    events, controller, _ = _simulate(1, threads, run_times, learn_time, steps=8)
    takes = [e for e in events if e[0] == "take"]
    assert len(takes) == 8
    assert controller.dropped == [] and all(e[3] == 0 for e in takes)  # nothing generated in vain
    for _, step, groups, _ in takes:
        assert all(0 <= step - version <= 1 for _, version in groups)  # the staleness bound, on every group
    assert len(controller.queue) + len(controller.in_flight) == 0  # no run started for a step after the last


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_two_threads_at_staleness_one_still_overlap_generation_with_training(schedule):
    """The groups trained at step k+1 are dispatched before training step k ends (the publish of
    version k+1), in recorded event order."""
    run_times, learn_time = SCHEDULES[schedule]
    events, _, _ = _simulate(1, 2, run_times, learn_time, steps=8)
    position = {("publish", e[1]): i for i, e in enumerate(events) if e[0] == "publish"}
    dispatched_at = {index: i for i, e in enumerate(events) if e[0] == "dispatch" for index in e[1]}
    for event in events:
        if event[0] == "take" and event[1] >= 1:
            step, groups = event[1], event[2]
            assert all(dispatched_at[index] < position[("publish", step)] for index, _ in groups), step


def test_two_threads_at_staleness_one_hide_most_of_the_waiting():
    """When rollouts wait twice as long as the learner computes, the schedule the admission allows
    finishes 8 steps in under 2/3 of the synchronous time (virtual time: rollouts 4, learning 2)."""
    _, _, async_end = _simulate(1, 2, [4.0], 2.0, steps=8)
    assert 8 * (4.0 + 2.0) / async_end >= 1.5


def test_staleness_zero_never_generates_ahead():
    """max_staleness 0: every run starts after the learner published the version it is trained at."""
    events, controller, _ = _simulate(0, 2, [3.0, 1.0], 1.0, steps=5)
    assert controller.dropped == []
    publish_position = {e[1]: i for i, e in enumerate(events) if e[0] == "publish"}
    dispatched_at = {index: i for i, e in enumerate(events) if e[0] == "dispatch" for index in e[1]}
    for event in events:
        if event[0] == "take" and event[1] >= 1:
            assert all(dispatched_at[index] > publish_position[event[1]] for index, _ in event[2])


def _blocked_dispatch(controller: AsyncRollouts) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(controller.dispatch()), daemon=True)
    thread.start()
    thread.join(timeout=0.2)
    return thread, result


def test_extra_groups_the_learner_waits_for_are_admitted():
    """Dynamic sampling asks for one more group at the same step while the next run is held back by the
    staleness admission (max_staleness 0, version 1 not published yet): the learner's wait admits it."""
    controller = _controller(max_staleness=0, threads=1)
    batch = controller.dispatch()
    controller.finish(batch, [_group(index, 0) for index, _ in batch], busy_s=0.0)
    controller.take(GROUPS, 0)
    assert not controller.admits()  # the next run would be trained at step 1 under version 0
    thread, result = _blocked_dispatch(controller)
    assert thread.is_alive()

    def rollout_thread_plays():
        thread.join(timeout=30)
        if result and result[0]:
            controller.finish(result[0], [_group(index, 0) for index, _ in result[0]], busy_s=0.0)

    feeder = threading.Thread(target=rollout_thread_plays, daemon=True)
    feeder.start()
    taken, stats = controller.take(1, 0, alive=feeder.is_alive)
    controller.stop()
    assert len(taken) == 1 and stats.dropped_groups == 0


def test_a_dispatch_held_back_by_staleness_ends_when_training_ends():
    controller = _controller(max_staleness=1, threads=3)
    controller.dispatch()
    controller.dispatch()  # two steps' worth started under version 0: a third would be trained at step 2
    thread, result = _blocked_dispatch(controller)
    assert thread.is_alive()
    controller.stop()
    thread.join(timeout=30)
    assert not thread.is_alive() and result == [None]


def test_publishing_a_version_releases_a_held_back_dispatch():
    controller = _controller(max_staleness=1, threads=3)
    first = controller.dispatch()
    controller.dispatch()
    controller.finish(first, [_group(index, 0) for index, _ in first], busy_s=0.0)
    controller.take(GROUPS, 0)
    assert not controller.admits()  # step 2's groups under version 0: too old
    controller.publish(1)
    assert controller.admits()


def test_trainer_with_two_threads_at_staleness_one_drops_nothing_and_overlaps(make_config, monkeypatch):
    """A real run: 2 rollout threads, max_staleness 1. No group is dropped, every trained turn is within
    one version, and the groups of step k+1 were dispatched before step k's weights were published.

    The learner's publish of version v waits (for at most 60 s, never asserted on) until v + 1 runs were
    dispatched: that takes the operating system's thread scheduling out of the recorded order. The
    admission must allow that dispatch before version v exists; a rule that did not would hold the
    publish for the whole minute and then fail the order assertion."""
    steps = 4
    events: list[tuple] = []
    lock = threading.Condition()
    real_dispatch, real_publish, real_take = AsyncRollouts.dispatch, AsyncRollouts.publish, AsyncRollouts.take

    def dispatch(self):
        batch = real_dispatch(self)
        with lock:
            events.append(("dispatch", [index for index, _ in batch or []], self.published))
            lock.notify_all()
        return batch

    def publish(self, version):
        with lock:
            if version < steps:
                lock.wait_for(lambda: sum(e[0] == "dispatch" and bool(e[1]) for e in events) > version, timeout=60)
            events.append(("publish", version))
        real_publish(self, version)

    def take(self, count, learner_version, **kwargs):
        taken, stats = real_take(self, count, learner_version, **kwargs)
        with lock:
            events.append(("take", learner_version, [(g.index, g.version) for g in taken], stats.dropped_groups))
        return taken, stats

    monkeypatch.setattr(AsyncRollouts, "dispatch", dispatch)
    monkeypatch.setattr(AsyncRollouts, "publish", publish)
    monkeypatch.setattr(AsyncRollouts, "take", take)
    config = make_config(async_rollouts=True, max_staleness=1, async_rollout_threads=2, max_steps=steps,
                         print_step_times=False)
    trainer = AgentGRPOTrainer(args=config, env_factory=make_letter_env)
    trainer.train()
    takes = [e for e in events if e[0] == "take"]
    assert [e[1] for e in takes] == list(range(steps))
    assert trainer._async is not None and trainer._async.workers == []
    dropped = [h["async/dropped_groups"] for h in trainer.state.log_history if "async/dropped_groups" in h]
    assert dropped == [0.0] * steps and all(e[3] == 0 for e in takes)
    for _, step, groups, _ in takes:
        assert all(0 <= step - version <= 1 for _, version in groups)
    staleness_max = [h["async/staleness_max"] for h in trainer.state.log_history if "async/staleness_max" in h]
    assert staleness_max and max(staleness_max) <= 1  # every trained turn, not only each group's first
    dispatched = [index for e in events if e[0] == "dispatch" for index in e[1]]
    assert sorted(dispatched) == sorted(index for e in takes for index, _ in e[2])  # all generated was trained
    publish_at = {e[1]: i for i, e in enumerate(events) if e[0] == "publish"}
    dispatch_at = {index: i for i, e in enumerate(events) if e[0] == "dispatch" for index in e[1]}
    for _, step, groups, _ in takes[1:]:
        assert all(dispatch_at[index] < publish_at[step] for index, _ in groups), (step, events)

"""Asynchronous rollouts, piece by piece (no trainer): the truncated importance weight, the
bounded queue and its staleness rule, the data cursor, weight swaps at the configured boundary."""

from __future__ import annotations

import math
import threading

import pytest
import torch

from agentgym_suite.rollout import EnvPool, Trajectory
from agentgym_suite.rollout.records import Turn
from agentgym_suite.trainers.async_rollouts.controller import AsyncRollouts
from agentgym_suite.trainers.async_rollouts.groups import FinishedGroup, dispatch_index, group_id
from agentgym_suite.trainers.async_rollouts.policy_snapshot import PolicySnapshot
from agentgym_suite.trainers.async_rollouts.staleness import (
    corrected_advantages,
    staleness_histogram,
    truncated_is_weights,
)
from agentgym_suite.trainers.async_rollouts.tasks import TaskCursor
from agentgym_suite.trainers.async_rollouts.worker import RolloutWorker
from trainers.fake_env import make_letter_env

TASKS = [{"task_id": f"t{i}", "env_seed": i} for i in range(5)]


def _controller(**overrides) -> AsyncRollouts:
    values = dict(group_size=2, groups_per_run=2, max_staleness=1, continue_episodes=False, seed=3,
                  snapshot=PolicySnapshot(torch.nn.Linear(2, 2), 0))
    values.update(overrides)
    return AsyncRollouts(TASKS, **values)


def _group(index: int, version: int) -> FinishedGroup:
    episodes = [Trajectory(task_id="t", group_id=group_id(index), turns=[Turn(0, "", "a", policy_version=version)])
                for _ in range(2)]
    return FinishedGroup(index=index, version=version, episodes=episodes)


# ------------------------------------------------------------------ the importance weight
def test_weight_is_truncated_never_the_raw_ratio():
    learner = torch.tensor([[0.0, -1.0, -2.0, 0.0]])
    generator = torch.tensor([[-6.0, -1.5, -2.0, -9.0]])  # raw ratios e^6, e^0.5, 1, (masked out)
    mask = torch.tensor([[1, 1, 1, 0]])
    weights, stats = truncated_is_weights(learner, generator, mask, cap=2.0)
    assert weights[0].tolist() == pytest.approx([2.0, math.exp(0.5), 1.0, 0.0])
    assert stats["async/is_ratio_raw_max"] == pytest.approx(math.exp(6.0))
    assert stats["async/is_weight_max"] == pytest.approx(2.0)
    assert stats["async/is_truncated_share"] == pytest.approx(1 / 3)
    advantages = torch.tensor([[1.0, -1.0, 0.5, 3.0]])
    assert corrected_advantages(advantages, weights)[0].tolist() == pytest.approx([2.0, -math.exp(0.5), 0.5, 0.0])


@pytest.mark.parametrize("cap", [None, math.inf, float("nan"), 0.5])
def test_weight_without_a_finite_cap_is_refused(cap):
    with pytest.raises(ValueError, match="finite"):
        truncated_is_weights(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), cap=cap)


def test_folding_the_weight_into_the_advantage_weights_the_clipped_loss():
    """TRL's clipped token loss -min(r*A, clip(r)*A) times w equals the loss of the advantage A*w (w >= 0)."""
    ratio = torch.tensor([0.5, 0.9, 1.0, 1.3, 2.0])
    advantage = torch.tensor([1.0, -2.0, 0.5, -1.0, 3.0])
    weight = torch.tensor([0.0, 0.3, 1.0, 2.0, 1.7])

    def loss(a):
        return -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a)

    assert torch.allclose(loss(advantage) * weight, loss(corrected_advantages(advantage, weight)))


# ------------------------------------------------------------------ queue and staleness
def test_stale_groups_are_dropped_and_counted_fresh_ones_kept_in_order():
    controller = _controller(max_staleness=1)
    controller.queue.extend([_group(0, 0), _group(1, 2), _group(2, 1), _group(3, 3)])
    taken, stats = controller.take(2, learner_version=3)
    assert [g.index for g in taken] == [1, 3]
    assert stats.dropped_groups == 2 and stats.dropped_episodes == 4
    assert stats.staleness == [1, 0]
    assert controller.dropped == [0, 2] and controller.trained == [1, 3]


def test_histogram_shares_sum_to_one():
    hist = staleness_histogram([0, 1, 1, 2], max_staleness=2)
    assert [hist[f"async/staleness_hist/{k}"] for k in range(3)] == [0.25, 0.5, 0.25]
    assert hist["async/staleness_mean"] == 1.0 and hist["async/staleness_max"] == 2.0


def test_dispatch_waits_for_room_in_the_queue():
    controller = _controller(max_staleness=1)  # capacity: one step of 2 groups
    first = controller.dispatch()
    assert [i for i, _ in first] == [0, 1]
    blocked: list = []
    thread = threading.Thread(target=lambda: blocked.append(controller.dispatch()))
    thread.start()
    thread.join(timeout=0.3)
    assert thread.is_alive(), "the generator ran ahead of a full queue"
    controller.finish(first, [_group(0, 0), _group(1, 0)], busy_s=0.1)
    controller.take(2, learner_version=0)
    thread.join(timeout=5)
    assert [i for i, _ in blocked[0]] == [2, 3]
    assert 0.0 < controller.generator_idle_share() <= 1.0


def test_a_take_that_drops_stale_groups_makes_room_for_the_waiting_thread():
    """The queue is full of stale groups and the rollout thread waits for room: the learner's take
    drops them, which must wake the thread, whose fresh groups it then takes (no deadlock)."""
    controller = _controller(max_staleness=0)  # room for one run of 2 groups
    controller.queue.extend([_group(7, 0), _group(8, 0)])

    def rollout_thread():
        batch = controller.dispatch()
        if batch is not None:
            controller.finish(batch, [_group(index, 1) for index, _ in batch], busy_s=0.0)

    thread = threading.Thread(target=rollout_thread, daemon=True)
    thread.start()
    give_up = threading.Event()
    result: list = []
    learner = threading.Thread(target=lambda: result.append(controller.take(2, 1, alive=lambda: not give_up.is_set())),
                               daemon=True)
    learner.start()
    learner.join(timeout=30)
    give_up.set()
    controller.stop()
    assert result, "the learner waited for groups while the rollout thread waited for room"
    taken, stats = result[0]
    assert stats.dropped_groups == 2 and [g.version for g in taken] == [1, 1]


def test_a_failed_rollout_thread_reaches_the_learner():
    controller = _controller()
    controller.fail(OSError("env server gone"))
    with pytest.raises(RuntimeError, match="env server gone"):
        controller.take(1, learner_version=0)


def test_checkpoint_state_keeps_queue_cursor_and_groups_in_flight():
    controller = _controller(max_staleness=2)
    batch = controller.dispatch()
    controller.finish(batch, [_group(0, 0), _group(1, 0)], busy_s=0.0)
    controller.dispatch()  # 2 and 3 in flight
    controller.take(1, learner_version=0)
    state = controller.state_dict()
    assert state["cursor"] == {"next_index": 4, "redo": [2, 3]}
    assert [g.index for g in state["queue"]] == [1] and state["trained"] == [0]
    resumed = _controller(max_staleness=2)
    resumed.load_state_dict(state)
    assert [i for i, _ in resumed.dispatch()] == [2, 3]  # in flight when saved: played again first
    assert [g.index for g in resumed.queue] == [1]


def test_task_order_depends_on_seed_and_index_only():
    a, b = TaskCursor(5, seed=3), TaskCursor(5, seed=3)
    rows = [a.row(a.take()) for _ in range(10)]
    assert rows == [b.row(i) for i in range(10)]
    assert sorted(rows[:5]) == list(range(5)) and sorted(rows[5:]) == list(range(5))  # each epoch: every task once
    assert dispatch_index(group_id(17)) == 17


# ------------------------------------------------------------------ weight swaps and version tags
class _TurnEngine:
    """Plays 3 turns per episode; the learner publishes version 1 during turn 0."""

    def __init__(self, snapshot: PolicySnapshot, boundary) -> None:
        self.snapshot, self.boundary = snapshot, boundary

    def run(self, envs, specs, env_id=""):
        trajectories = [Trajectory(task_id=s.task_id, group_id=s.group_id, traj_id=s.traj_id) for s in specs]
        for turn in range(3):
            self.boundary(True)
            for trajectory in trajectories:
                trajectory.turns.append(Turn(turn, "", "say a"))
            if turn == 0:
                self.snapshot.publish(torch.nn.Linear(2, 2), 1)
        return trajectories


@pytest.mark.parametrize("update, expected", [("finish", [0, 0, 0]), ("continue", [0, 1, 1])])
def test_episode_spanning_an_update_follows_the_setting(update, expected):
    controller = _controller(continue_episodes=update == "continue")
    worker = RolloutWorker(controller, lambda model, seed, boundary: _TurnEngine(controller.snapshot, boundary),
                           make_letter_env, "letters", EnvPool())
    try:
        groups = worker.play(controller.dispatch())
    finally:
        worker.pool.close()
    assert len(groups) == 2 and all(len(g.episodes) == 2 for g in groups)
    for group in groups:
        assert group.version == 0  # dispatched under one version
        for episode in group.episodes:
            assert [t.policy_version for t in episode.turns] == expected
    assert controller.snapshot.version == expected[-1]

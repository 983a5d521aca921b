"""The rollout thread: plays groups on its own envs with the generator's copy of the policy.

Loop: wait until a run may start (:meth:`~agentgym_suite.trainers.async_rollouts.controller.AsyncRollouts.dispatch`),
take the newest published weights (between rollouts), play the dispatched groups in one batched
:class:`~agentgym_suite.rollout.RolloutEngine` run, tag every turn with the version that produced
it, hand the groups to the queue. The engine's once-per-turn callback is the turn boundary: it
stops the thread promptly and, with ``async_episode_update: continue``, takes new weights there.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine, Trajectory
from agentgym_suite.trainers.async_rollouts.compat import env_refusal
from agentgym_suite.trainers.async_rollouts.groups import FinishedGroup, group_id


class Stopped(Exception):
    """Raised at a turn boundary when the trainer stops the rollout thread."""


class RolloutWorker(threading.Thread):
    """The thread that produces finished groups.

    Args:
        controller: the :class:`~agentgym_suite.trainers.async_rollouts.controller.AsyncRollouts`
            it takes dispatches from and hands groups to.
        make_engine: ``make_engine(worker, seed, turn_boundary)``: the trainer's rollout engine over a
            generation backend on the worker's copy of the policy (``worker.snapshot.model``, with
            ``worker.tokenizer``, envs from ``worker.pool``), sampling with ``seed``, calling
            ``turn_boundary`` once per turn.
        env_factory, env_id: the training envs; pool: the thread's own env pool (closed when it ends).
        snapshot: the thread's own copy of the policy (default: the controller's); tokenizer: its own
            tokenizer (a fast tokenizer used from two threads at once can fail).
    """

    def __init__(self, controller: Any, make_engine: Callable[[Any, int, Callable[[bool], bool]], RolloutEngine],
                 env_factory: Callable[[], Any], env_id: str, pool: EnvPool, *, snapshot: Any = None,
                 tokenizer: Any = None, name: str = "agentgym-async-rollouts") -> None:
        super().__init__(name=name, daemon=True)
        self.snapshot = snapshot if snapshot is not None else controller.snapshot
        self.tokenizer = tokenizer
        self.controller = controller
        self.make_engine = make_engine
        self.env_factory = env_factory
        self.env_id = env_id
        self.pool = pool

    def run(self) -> None:
        """Play until stopped; an error is handed to the learner (which raises it)."""
        controller = self.controller
        try:
            while True:
                batch = controller.dispatch()
                if batch is None:
                    return
                self.snapshot.apply_pending()  # a rollout starts on the newest published weights
                started = time.monotonic()
                groups = self.play(batch)
                controller.finish(batch, groups, busy_s=time.monotonic() - started)
        except Stopped:
            return
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the learner, not vanish with the thread
            controller.fail(exc)
        finally:
            self.pool.close()

    def play(self, batch: list[tuple[int, dict[str, Any]]]) -> list[FinishedGroup]:
        """Play G episodes of each dispatched task; returns one finished group per dispatch."""
        controller = self.controller
        size = controller.group_size
        specs = [EpisodeSpec(task_id=str(task["task_id"]), seed=int(task["env_seed"]), group_id=group_id(index),
                             traj_id=f"{group_id(index)}.{k}", attempt=k)
                 for index, task in batch for k in range(size)]
        versions: list[int] = []

        def turn_boundary(active: bool) -> bool:
            if controller.stopping:
                raise Stopped()
            if controller.continue_episodes:
                self.snapshot.apply_pending()
            versions.append(self.snapshot.version)
            return active

        seed = controller.sampling_seed(batch[0][0])
        engine = self.make_engine(self, seed, turn_boundary)
        envs = self.pool.get_made(self.env_factory, len(specs), env_id=self.env_id)
        _refuse_borrowing(envs, self.env_id)
        trajectories = engine.run(envs, specs, env_id=self.env_id)
        self.pool.distrust(envs, trajectories)
        start_version = versions[0] if versions else self.snapshot.version
        for trajectory in trajectories:
            for turn in trajectory.turns:
                turn.policy_version = versions[turn.index] if turn.index < len(versions) else start_version
        return [FinishedGroup(index=index, version=start_version, episodes=_members(trajectories, index, size, i))
                for i, (index, _) in enumerate(batch)]


def _refuse_borrowing(envs: list[Any], env_id: str) -> None:
    """An env made by a custom factory that wants the policy as its world model is refused here."""
    for env in envs:
        wants = getattr(getattr(env, "unwrapped", None), "wants_policy", None)
        if callable(wants) and wants():
            raise ValueError(env_refusal(str(getattr(env.unwrapped, "policy_setting", "world_model")), env_id))


def _members(trajectories: list[Trajectory], index: int, size: int, position: int) -> list[Trajectory]:
    members = trajectories[position * size:(position + 1) * size]
    if any(t.group_id != group_id(index) for t in members):
        raise RuntimeError("the rollout engine returned episodes out of order; a group would mix tasks.")
    return members

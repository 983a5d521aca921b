"""The trainer's side of asynchronous rollouts: what ``AgentGRPOTrainer`` calls, in one object.

:func:`build_async_rollouts` returns None unless ``async_rollouts`` is set; otherwise an
:class:`AsyncTrainerHooks`, built from typed values (:class:`LearnerSide`), that the trainer asks
in three places:

* its rollout phase (:meth:`AsyncTrainerHooks.rollout_phase`): the generation batch's groups
  come from the queue instead of being played (with ``dynamic_sampling``, the replacements too);
* its loss phase (:meth:`AsyncTrainerHooks.correct`): the truncated importance weight folded
  into the advantages TRL's loss reads;
* ``train`` (:meth:`AsyncTrainerHooks.resume_from`, :meth:`AsyncTrainerHooks.stop`).

A :class:`AsyncRolloutsCallback` starts the rollout thread when training begins (after a resumed
run's weights are loaded), publishes the weights after every optimizer step (the policy version
is ``state.global_step``), saves the queue with every checkpoint, and stops the thread at the end.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
from transformers import TrainerCallback

from agentgym_suite.rollout import EnvPool, RolloutEngine, Trajectory
from agentgym_suite.trainers.async_rollouts.compat import check_async_setup
from agentgym_suite.trainers.async_rollouts.controller import AsyncRollouts, TakeStats
from agentgym_suite.trainers.async_rollouts.weight_sync import weight_sync_for
from agentgym_suite.trainers.async_rollouts.staleness import (
    corrected_advantages,
    staleness_histogram,
    truncated_is_weights,
    turn_staleness,
)
from agentgym_suite.trainers.async_rollouts.worker import RolloutWorker
from agentgym_suite.trainers.dynamic_sampling import fill_batch

logger = logging.getLogger(__name__)

STATE_FILE = "async_rollouts.pt"
"""The asynchronous-rollout state inside a ``checkpoint-N`` directory."""


@dataclass
class LearnerSide:
    """What asynchronous rollouts need from the trainer, as typed values (no trainer object)."""

    args: Any
    """The trainer's ``AgentGRPOConfig``."""
    tasks: Any
    """The training task rows (``task_id``, ``env_seed``): the trainer's dataset, read only when async is on."""
    group_size: int
    policy: Callable[[], torch.nn.Module]
    """The policy being trained, unwrapped (copied for the generator, read after each optimizer step)."""
    env_factory: Callable[[], Any]
    env_id: str
    tokenizer: Any
    info_keys: tuple[str, ...]
    """``info`` keys the rollout records keep (the trainer's)."""
    record_oracle: bool
    """Record the env's oracle per turn (a teacher reads it)."""
    sync: Any
    """The trainer's :class:`~agentgym_suite.trainers.distributed.ProcessSync` (dynamic sampling's gathers)."""
    record: Callable[[str, float], None]
    """Append a value to a training metric of the current step."""


def build_async_rollouts(side: LearnerSide, credit: Any) -> AsyncTrainerHooks | None:
    """The hooks of a trainer whose config sets ``async_rollouts`` (after the setup checks), else None;
    the trainer adds :attr:`AsyncTrainerHooks.callback` to its callbacks."""
    if not side.args.async_rollouts:
        return None
    check_async_setup(side.args, credit, side.sync.world_size)
    return AsyncTrainerHooks(side)


class AsyncTrainerHooks:
    """Owns the queue (:class:`~agentgym_suite.trainers.async_rollouts.controller.AsyncRollouts`),
    the generator's copy of the policy and the rollout thread of one trainer."""

    def __init__(self, side: LearnerSide) -> None:
        self.side = side
        args = side.args
        self.group_size = int(side.group_size)
        self.groups_per_step = int(args.generation_batch_size) // self.group_size
        self.tasks = [{"task_id": row["task_id"], "env_seed": row["env_seed"]} for row in side.tasks]
        self.controller: AsyncRollouts | None = None
        self.weights = weight_sync_for(args)
        """How the threads get the learner's weights (:mod:`~agentgym_suite.trainers.async_rollouts.weight_sync`)."""
        self.workers: list[RolloutWorker] = []
        self.callback = AsyncRolloutsCallback(self)
        """The ``TrainerCallback`` that starts, feeds, checkpoints and stops the rollout thread."""
        self._resume_dir: str | None = None
        self._last_take_end: float | None = None

    # ------------------------------------------------------------------ lifecycle
    def resume_from(self, checkpoint: str | None) -> None:
        """The checkpoint ``train`` resumes from (None: a fresh run)."""
        self._resume_dir = checkpoint if isinstance(checkpoint, str) else None

    def start(self, version: int, max_steps: int | None = None) -> None:
        """Give the generator the policy at ``version`` (a copy per thread, or an adapter on the server),
        restore a resumed run's queue, start the threads (which start no run for steps at or after
        ``max_steps``)."""
        args = self.side.args
        policy = self.side.policy()
        threads = int(args.async_rollout_threads)
        snapshots = self.weights.start(policy, version, threads)
        self.controller = AsyncRollouts(
            self.tasks, group_size=self.group_size, groups_per_run=self.groups_per_step,
            max_staleness=args.max_staleness, continue_episodes=args.async_episode_update == "continue",
            seed=int(args.seed), snapshot=snapshots[0], threads=threads)
        self.controller.last_step = int(max_steps) if max_steps and max_steps > 0 else None
        if self._resume_dir is not None:
            self._restore(self._resume_dir, version)
        self.workers = [
            RolloutWorker(self.controller, self._make_engine, self.side.env_factory, self.side.env_id,
                          EnvPool(args.step_timeout, workers=args.parsed_env_workers), snapshot=snapshot,
                          tokenizer=copy.deepcopy(self.side.tokenizer), name=f"agentgym-async-rollouts-{i}")
            for i, snapshot in enumerate(snapshots)]
        self._last_take_end = time.monotonic()
        for worker in self.workers:
            worker.start()

    def stop(self) -> None:
        """Stop the rollout thread (at its next dispatch or turn boundary) and wait for it."""
        if self.controller is not None:
            self.controller.stop()
        for worker in self.workers:
            worker.join(timeout=120)
            if worker.is_alive():
                logger.warning("an asynchronous rollout thread did not stop within 120 s (an env step still running).")
        self.workers = []
        if self.controller is not None:
            self.weights.close()

    def publish(self, version: int) -> None:
        """After a trainer step: the learner's weights become ``version`` for the generator."""
        if self.controller is not None:
            self.weights.publish(self.side.policy(), version, [worker.snapshot for worker in self.workers])
            self.controller.publish(version)  # after every thread was offered it: runs dispatched now start under it
            for key, value in self.weights.metrics().items():
                self.side.record(key, value)

    # ------------------------------------------------------------------ rollout phase
    def rollout_phase(self, inputs: list[dict[str, Any]], num_generations: int, version: int
                      ) -> tuple[list[Trajectory], list[Trajectory]]:
        """The generation batch from the queue: as many groups as ``inputs`` holds (its tasks are the
        sampler's; under async the cursor chooses them), with ``dynamic_sampling`` the uninformative
        groups replaced by further queued groups. ``version`` is the learner's policy version (its
        optimizer steps). Returns the episodes to train on and every episode taken; the step's
        async metrics are recorded."""
        args = self.side.args
        if self.controller is None:
            raise RuntimeError("asynchronous rollouts were not started: the trainer's callback starts them when "
                               "training begins.")
        version = int(version)
        count = len(inputs) // num_generations
        totals = TakeStats()
        taken: list[Trajectory] = []

        def take(groups: int) -> list[Trajectory]:
            got, stats = self.controller.take(groups, version, alive=self._alive)
            totals.queue_depth = totals.queue_depth or stats.queue_depth
            totals.dropped_groups += stats.dropped_groups
            totals.dropped_episodes += stats.dropped_episodes
            totals.wait_s += stats.wait_s
            totals.staleness += stats.staleness
            episodes = [e for g in got for e in g.episodes]
            taken.extend(episodes)
            return episodes

        episodes = take(count)
        if args.dynamic_sampling:
            bound = args.dynamic_sampling_max_rollouts
            episodes, ds = fill_batch(
                episodes, target_groups=count, group_size=num_generations, sync=self.side.sync,
                play_more=lambda groups, _round: take(groups),
                max_extra_rollouts=2 * args.generation_batch_size if bound is None else bound)
            for key, value in ds.metrics().items():
                self.side.record(key, value)
        self._log(version, totals, episodes)
        return episodes, taken

    def _alive(self) -> bool:
        return any(worker.is_alive() for worker in self.workers)

    def _log(self, version: int, totals: TakeStats, trained: list[Trajectory]) -> None:
        now = time.monotonic()
        interval = now - (self._last_take_end or now)
        self._last_take_end = now
        metrics = {
            "async/policy_version": float(version),
            "async/queue_depth": float(totals.queue_depth),
            "async/dropped_groups": float(totals.dropped_groups),
            "async/dropped_episodes": float(totals.dropped_episodes),
            "async/learner_idle_share": totals.wait_s / interval if interval > 0 else 0.0,
            "async/generator_idle_share": self.controller.generator_idle_share(),
            **staleness_histogram(turn_staleness(version, trained), self.side.args.max_staleness),
        }
        for key, value in metrics.items():
            self.side.record(key, float(value))

    def _make_engine(self, worker: RolloutWorker, seed: int, turn_boundary: Any) -> RolloutEngine:
        """The trainer's rollout engine over ``worker``'s weights (its copy of the policy, or the server
        adapter it names), built in its thread, sampling as the trainer's transformers path does."""
        from agentgym_suite.trainers.generation import rollout_sampling

        side, args = self.side, self.side.args
        params, generation_kwargs = rollout_sampling(
            args, temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, min_p=args.min_p,
            repetition_penalty=args.repetition_penalty, max_new_tokens=args.max_completion_length, seed=seed)
        backend = self.weights.backend(worker.snapshot, worker.tokenizer, args, generation_kwargs)
        return RolloutEngine(
            backend, mode=args.prompt_format, sampling=params, max_turns=args.max_turns,
            history_length=args.history_length, info_keys=side.info_keys, record_oracle=side.record_oracle,
            max_prompt_tokens=args.max_prompt_tokens, lockstep=turn_boundary, env_pool=worker.pool)

    # ------------------------------------------------------------------ loss phase
    @property
    def needs_learner_logps(self) -> bool:
        """The correction reads the learner's log-probs of the batch (``tis``); ``behaviour_clip`` does not."""
        return self.side.args.async_correction == "tis"

    def loss_inputs(self, output: dict[str, Any], learner_logps: torch.Tensor | None, generator_logps: torch.Tensor,
                    loss_mask: torch.Tensor) -> dict[str, Any]:
        """What TRL's loss reads, corrected for stale samples: with ``tis`` the advantages carry the
        truncated importance weight (:meth:`correct`); with ``behaviour_clip`` the old log-probs PPO
        clips against are the generator's (TRL's ``delta`` caps the ratio)."""
        if self.needs_learner_logps:
            if learner_logps is None:
                raise RuntimeError("async_correction=tis needs the learner's log-probs of the batch.")
            output["advantages"] = self.correct(output["advantages"], learner_logps, generator_logps, loss_mask)
        else:
            output["old_per_token_logps"] = generator_logps * loss_mask.to(generator_logps.dtype)
        return output

    def correct(self, advantages: torch.Tensor, learner_logps: torch.Tensor, generator_logps: torch.Tensor,
                loss_mask: torch.Tensor) -> torch.Tensor:
        """The advantages with the truncated importance weight folded in; its statistics go to the metrics."""
        weights, stats = truncated_is_weights(learner_logps.float(), generator_logps.float(), loss_mask,
                                              self.side.args.async_is_cap)
        for key, value in stats.items():
            self.side.record(key, value)
        return corrected_advantages(advantages, weights)

    # ------------------------------------------------------------------ checkpoints
    def save(self, checkpoint_dir: str) -> None:
        """Write the queue, the data cursor and the policy version into ``checkpoint_dir``."""
        if self.controller is None or not os.path.isdir(checkpoint_dir):
            return
        state = self.controller.state_dict()
        torch.save(state, os.path.join(checkpoint_dir, STATE_FILE))

    def _restore(self, checkpoint_dir: str, version: int) -> None:
        path = os.path.join(checkpoint_dir, STATE_FILE)
        if not os.path.exists(path):
            logger.warning("%s has no %s (saved without async_rollouts): the task cursor starts after the %d groups "
                           "its %d steps trained.", checkpoint_dir, STATE_FILE, version * self.groups_per_step, version)
            self.controller.cursor.next_index = version * self.groups_per_step
            return
        state = torch.load(path, weights_only=False)
        if int(state["version"]) != version:
            raise ValueError(f"{path} was saved at policy version {state['version']} but the checkpoint's step is "
                             f"{version}; the checkpoint directory is inconsistent.")
        self.controller.load_state_dict(state)


class AsyncRolloutsCallback(TrainerCallback):
    """Starts, feeds and stops asynchronous rollouts at the trainer's events."""

    def __init__(self, hooks: AsyncTrainerHooks) -> None:
        self.hooks = hooks

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Start the rollout thread on the (possibly restored) weights."""
        self.hooks.start(int(state.global_step), max_steps=int(state.max_steps or 0))

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Publish the weights of the trainer step just taken (its last optimizer update)."""
        self.hooks.publish(int(state.global_step))

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Save the queue with the checkpoint TRL just wrote."""
        self.hooks.save(os.path.join(args.output_dir, f"checkpoint-{state.global_step}"))

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Stop the rollout thread."""
        self.hooks.stop()

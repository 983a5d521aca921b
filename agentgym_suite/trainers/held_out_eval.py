"""Evaluation during training: held-out tasks played by the rollout engine, success logged.

With ``eval_strategy`` (``steps``/``epoch``) and ``eval_steps``, the trainer's ``evaluate``
(``AgentGRPOTrainer.evaluate``, which runs :class:`HeldOutEvaluation`) plays every held-out
task ``num_generations_eval`` times (default once) with the current policy at
``eval_temperature`` (0.4, as the papers), through the same rollout engine and
generation backend as training, and logs the results into the run's own log
(``trainer.state.log_history`` and every ``report_to`` backend):

* ``eval_success_rate`` — share of held-out episodes won, the stable name to read learning
  curves from (:func:`held_out_curve` gives ``[(step, success rate), ...]`` from
  ``trainer.state.log_history``);
* ``eval_return_mean``, ``eval_score_mean``, ``eval_turns_mean``, ``eval_error_rate``,
  ``eval_episodes``, ``eval_crashed``.

They are :func:`~agentgym_suite.rollout.summary.summarize_outcomes` of the episodes, the summary
``agentgym eval`` writes as ``success_rate``, ``mean_reward``, ``mean_score``, ``mean_turns``,
``error_rate``, ``episodes`` and ``crashed``: a crashed episode is left out of the rates, not
counted as lost. A rate no episode counts towards (every one crashed) is not logged.

Nothing of the training batch is touched: no rows are built, the credit plug-in is not called,
and TRL's buffered generation batch and stored credit batch stay as they were. Held-out tasks
come from ``eval_env_kwargs`` (a split of the same env, e.g. ``{split: valid_unseen}``) and/or
``eval_task_ids``/``eval_num_tasks``, or from an ``eval_dataset`` with a ``task_id`` column. With
several processes each plays a share and the results are gathered.

Episode seeds: attempt ``k`` at a held-out task resets with
:func:`~agentgym_suite.rollout.seeding.episode_seed` of the run's ``seed``, the task and ``k`` —
the seeds ``agentgym eval --seed <seed> --k <num_generations_eval>`` plays on the same tasks. An
``eval_dataset`` with an ``env_seed`` column fixes the reset seed of every attempt at that row's task
instead.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import gymnasium as gym
from datasets import Dataset

from agentgym_suite.core.interrupts import check as check_interrupt
from agentgym_suite.rollout import EnvPool, EpisodeSpec, Trajectory
from agentgym_suite.rollout.seeding import episode_seed
from agentgym_suite.rollout.summary import EpisodeOutcome, summarize_outcomes

METRICS = {"success_rate": "success_rate", "return_mean": "mean_reward", "score_mean": "mean_score",
           "turns_mean": "mean_turns", "error_rate": "error_rate", "episodes": "episodes", "crashed": "crashed"}
"""Metrics an evaluation logs, each as ``<prefix>_<name>``, and the key of
:func:`~agentgym_suite.rollout.summary.summarize_outcomes` (``agentgym eval``'s summary) it is."""

EVAL_SEED_OFFSET = 7_919
"""Held-out episodes sample with seed ``args.seed * EVAL_SEED_OFFSET + step``: fixed per step, and
drawn from no generator that training uses, so evaluating does not change later rollouts."""


def sampling_seed(run_seed: int, step: int) -> int:
    """The sampling seed of the held-out evaluation at training step ``step`` of a run seeded
    ``run_seed`` (fixed per step; the episodes' reset seeds come from
    :func:`~agentgym_suite.rollout.seeding.episode_seed`)."""
    return int(run_seed) * EVAL_SEED_OFFSET + int(step)



def needs_held_out(args: Any) -> bool:
    """True when the config evaluates during training."""
    return str(getattr(args.eval_strategy, "value", args.eval_strategy)) != "no"


def held_out_dataset(args: Any, env: gym.Env) -> Dataset:
    """One row per held-out task (``task_id``), from ``eval_task_ids`` or the env's own task list (the
    eval split), cut to ``eval_num_tasks``; each attempt's seed comes from the run seed (see the
    module docstring)."""
    ids = list(args.eval_task_ids) if args.eval_task_ids else list(env.unwrapped.task_ids())
    if args.eval_num_tasks is not None:
        ids = ids[: args.eval_num_tasks]
    if not ids:
        raise ValueError("evaluation during training has no held-out tasks; check eval_env_kwargs (split) and "
                         "eval_task_ids.")
    return Dataset.from_dict({"prompt": [f"task {t}" for t in ids], "task_id": ids})


def default_dataset(args: Any, env_factory: Callable[[], gym.Env], *, custom_env: bool) -> Dataset | None:
    """The held-out dataset when the config evaluates during training (None otherwise), from a
    probe env of ``env_factory``; raises when nothing says which tasks are held out."""
    if not needs_held_out(args):
        return None
    require_held_out_source(args, custom_env)
    probe = env_factory()
    try:
        return held_out_dataset(args, probe)
    finally:
        probe.close()


def require_held_out_source(args: Any, custom_env: bool) -> None:
    """Raise when evaluation is on but nothing says which tasks are held out."""
    if args.eval_env_kwargs or args.eval_task_ids:
        return
    where = "the env factory you passed" if custom_env else f"{args.train_env_id}"
    raise ValueError(
        f"eval_strategy={args.eval_strategy!s} evaluates held-out tasks, but none are named: set eval_env_kwargs to a "
        f"held-out split of {where} (e.g. {{split: valid_unseen}}), or eval_task_ids, or pass eval_dataset."
    )


def held_out_specs(dataset: Dataset, episodes_per_task: int, *, run_seed: int, step: int) -> list[EpisodeSpec]:
    """Every held-out episode, task by task: ``episodes_per_task`` attempts at each row's task, attempt
    ``k`` reset with :func:`~agentgym_suite.rollout.seeding.episode_seed` (``run_seed``, task, ``k``),
    or with the row's ``env_seed`` when the dataset has one."""
    fixed = "env_seed" in dataset.column_names
    return [
        EpisodeSpec(task_id=str(row["task_id"]),
                    seed=int(row["env_seed"]) if fixed else episode_seed(run_seed, str(row["task_id"]), k),
                    group_id=f"eval{step}:{t}", traj_id=f"eval{step}:{t}.{k}", attempt=k)
        for t, row in enumerate(dataset)
        for k in range(episodes_per_task)
    ]


def process_share(dataset: Dataset, episodes_per_task: int, *, run_seed: int, rank: int, world: int, per_call: int,
                  step: int) -> list[list[EpisodeSpec]]:
    """This process's held-out episodes (:func:`held_out_specs`) in rollouts of at most ``per_call``;
    every process gets the same number of rollouts (some possibly empty), so they stay in step."""
    specs = held_out_specs(dataset, episodes_per_task, run_seed=run_seed, step=step)
    mine = specs[rank::world]
    rollouts = math.ceil(math.ceil(len(specs) / world) / max(per_call, 1))
    return [mine[i * per_call : (i + 1) * per_call] for i in range(rollouts)]


def summarize(outcomes: Sequence[EpisodeOutcome], prefix: str = "eval") -> dict[str, float]:
    """The metrics of :data:`METRICS` over the episodes' outcomes, named ``<prefix>_<metric>``
    (those no episode counts towards are left out)."""
    summary = summarize_outcomes(outcomes)
    return {f"{prefix}_{name}": float(summary[key]) for name, key in METRICS.items() if summary[key] is not None}


class HeldOutEvaluation:
    """Plays the held-out tasks for a trainer and returns the logged metrics.

    Args:
        env_factory: makes one held-out env.
        play: ``play(envs, specs, temperature, seed) -> trajectories``, the trainer's rollout with
            its current policy (the same engine and backend as training).
        sync: the trainer's :class:`~agentgym_suite.trainers.distributed.ProcessSync`.
        pool: where the held-out envs live: the trainer's pool, so they run where ``env_workers``
            says (the same workers as the training envs) and an env whose episode failed on the
            env side, or whose worker died, is replaced before the next evaluation. Default: a
            pool of its own with the env's default executor.
        env_id: the env id whose default executor an unset ``env_workers`` picks.
    """

    def __init__(self, env_factory: Callable[[], gym.Env], play: Callable[..., list[Trajectory]], sync: Any, *,
                 pool: EnvPool | None = None, env_id: str = "") -> None:
        self.env_factory = env_factory
        self.play = play
        self.sync = sync
        self.pool = pool if pool is not None else EnvPool()
        self.env_id = env_id

    def run(self, dataset: Dataset, *, episodes_per_task: int, per_call: int, temperature: float, seed: int,
            run_seed: int, step: int, prefix: str = "eval") -> tuple[dict[str, float], list[Trajectory]]:
        """Metrics over every process's held-out episodes, and this process's trajectories
        (``seed``: the sampling seed; ``run_seed``: the run's seed, which the episodes' reset seeds
        derive from)."""
        if "task_id" not in dataset.column_names:
            raise ValueError(f"the eval dataset needs a task_id column (and optionally env_seed); it has "
                             f"{sorted(dataset.column_names)}.")
        rollouts = process_share(dataset, episodes_per_task, run_seed=run_seed, rank=self.sync.rank,
                                 world=self.sync.world_size, per_call=per_call, step=step)
        played: list[Trajectory] = []
        for specs in rollouts:
            check_interrupt()  # a Ctrl-C swallowed during the last rollout stops here
            envs = self.pool.get_made(self.env_factory, len(specs), env_id=self.env_id)
            trajectories = self.play(envs, specs, temperature, seed)
            self.pool.distrust(envs, trajectories)
            played += trajectories
        outcomes = [o for part in self.sync.gather([EpisodeOutcome.of(t) for t in played]) for o in part]
        return summarize(outcomes, prefix), played

    def close(self) -> None:
        """Close the pool's envs (the trainer's pool: its training envs too) and their workers."""
        self.pool.close()


def held_out_curve(log_history: Sequence[dict[str, Any]], prefix: str = "eval") -> list[tuple[int, float]]:
    """``(step, success rate)`` of every held-out evaluation in a run's log
    (``trainer.state.log_history``, or the ``log_history`` of a checkpoint's ``trainer_state.json``)."""
    key = f"{prefix}_success_rate"
    return [(int(h["step"]), float(h[key])) for h in log_history if key in h and "step" in h]

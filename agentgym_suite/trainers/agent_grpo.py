"""``AgentGRPOTrainer``: TRL's ``GRPOTrainer`` trained on multi-turn episodes.

One generation batch, read top to bottom (the class's methods are in this order):

1. **rollout** (:meth:`AgentGRPOTrainer._rollout_phase`) — TRL hands ``_generate_and_score_completions``
   this process's share of ``generation_batch_size`` dataset rows (tasks, each repeated G times by
   TRL's sampler); the suite's ``RolloutEngine`` plays G episodes per task on the trainer's env
   pool (``env_workers``) with a generation backend over the live policy, and with
   ``dynamic_sampling`` (DAPO) groups whose returns are all equal are replaced by groups of new
   tasks, within ``dynamic_sampling_max_rollouts`` (:mod:`~agentgym_suite.trainers.dynamic_sampling`).
   With ``async_rollouts`` the groups come instead from the queue a rollout thread fills while the
   learner trains (:mod:`~agentgym_suite.trainers.async_rollouts`).
2. **score** (:meth:`AgentGRPOTrainer._score_phase`) — the episodes become rows (``row_layout``),
   padded to the same count on every process; the no-gradient passes the credit plug-in declares
   (old log-probs, teacher log-probs with privileged text, VAD's teacher logits on the fixed
   teacher of :mod:`~agentgym_suite.trainers.fixed_teacher`) run, and the plug-in's per-token
   advantages ``(R, T)`` over every process's rows replace TRL's per-sequence ones.
3. **loss** (:meth:`AgentGRPOTrainer._loss_phase`) — the rows that teach something are kept
   (``skip_uninformative_rows``) and the old-policy and reference log-probs TRL's loss reads are
   computed on them; per micro-batch, TRL's loss (``compute_loss``/``_compute_loss``) then adds
   the verl terms and the plug-in's auxiliary loss, computed from the same per-token log-probs TRL
   computed (captured, not recomputed). Plug-ins that distil whole distributions (``vad``) get the
   student's logits from one extra forward pass per micro-batch (TRL's fused LM head returns
   log-probs only).
4. **log** (:meth:`AgentGRPOTrainer._log_phase`) — episode metrics of every process's episodes,
   the plug-in's metrics, the step's trajectory file and the completions table.

Envs that borrow the policy (their ``policy_setting``, e.g. ``EnvACE-Rehearsal-v0`` with
``world_model: policy``) get the policy's generation backend before every rollout; the generations
the policy makes inside them (``Turn.role_generations``) are trained as rows of their role when the
plug-in's ``roles`` list it (``envace``: ``simulator`` rows).

Broken episodes (``Trajectory.broken``: the env raised in reset or step, a generation failed or
came back malformed, the env reported an error without terminating, e.g. a step timeout) are
dropped before the rows are built — masked out, not given a zero advantage: they get no gradient,
not even for the turns before the failure, and are left out of their group's baseline, so a
partial return never reads as a real outcome. They are still written to the step's trajectory
file with the reason in ``error``, counted in ``episodes/crashed`` and ``episodes/error_rate`` and left
out of ``episodes/success_rate`` (the one episode summary's rule). An env that terminates
an episode with an error (EnvACE's malformed tool call) has scored the agent's play; that
episode is trained on.

Rows that teach nothing are not trained (``skip_uninformative_rows``, on by default): a row whose
advantage is zero on every trained token and whose loss has no other term (no KL, no entropy bonus,
no auxiliary loss, as the plug-in's ``rows_with_other_terms`` declares) has a loss of exactly 0, so
it is left out of the forward and backward passes, while the loss is still normalised over every
row (the update is unchanged). A step where every group won costs its rollouts and a forward pass
over a few one-token padding rows.

The number of rows per generation batch varies with episode length. Every process pads its rows
with all-masked rows to the same count, a multiple of ``steps_per_generation`` (so TRL can split
it evenly and every process runs the same passes); the loss is normalised so padding rows change
nothing for any ``loss_type`` (:mod:`~agentgym_suite.trainers.memory_bound`, which also bounds
the rows per pass with ``max_rows_per_pass``). Several processes share one global batch for
credit and stay in lockstep (:mod:`~agentgym_suite.trainers.distributed`); ``use_vllm`` runs the
rollouts on TRL's vLLM generator (:mod:`~agentgym_suite.trainers.vllm_rollout`); ``eval_strategy``
plays held-out tasks during training (:meth:`AgentGRPOTrainer.evaluate`,
:mod:`~agentgym_suite.trainers.held_out_eval`).

The modules beside this one are pure helpers with typed inputs, except the four mixins this class
is made of, which are parts of it kept in files of their own so that this file reads as the four
phases: :class:`~agentgym_suite.trainers.micro_batch_loss.MicroBatchLoss` (TRL's per-micro-batch
step and loss, verl's update ends), :class:`~agentgym_suite.trainers.logprob_passes.LogprobPasses`
(the policy, reference, teacher and student passes), :class:`~agentgym_suite.trainers.row_batches.RowBatches`
(padded rows, the credit batch, the rows to train) and
:class:`~agentgym_suite.trainers.policy_loan.PolicyLoan` (the policy lent to envs that borrow it). Only this class and its mixins reach into TRL's trainer state
(:mod:`~agentgym_suite.trainers.trl_seam` lists what they use).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Callable, Iterator

import gymnasium as gym
import torch
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOTrainer

from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine, Trajectory
from agentgym_suite.rollout.records import INFO_SUBSET
from agentgym_suite.trainers.async_rollouts import LearnerSide, build_async_rollouts
from agentgym_suite.trainers import held_out_eval as held_out
from agentgym_suite.trainers import cpu_speed, fsdp2
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch, TeacherContext, TeacherSettings, build_credit_assigner
from agentgym_suite.trainers.run_context import run_context
from agentgym_suite.trainers.trl_seam import check_trl_seam
from agentgym_suite.trainers.fixed_teacher import FixedTeacher, build_fixed_teacher, frozen_copy
from agentgym_suite.trainers.distributed import LockstepBackend, ProcessSync, credit_over_processes
from agentgym_suite.trainers.dynamic_sampling import fill_batch
from agentgym_suite.trainers.generation import TRLVLLMBackend, rollout_sampling, template_kwargs
from agentgym_suite.trainers.logprob_passes import LogprobPasses
from agentgym_suite.trainers.memory_bound import GLOBAL_ROWS, check_loss_settings, padding_rows
from agentgym_suite.trainers.micro_batch_loss import MicroBatchLoss
from agentgym_suite.trainers.policy_loan import PolicyLoan
from agentgym_suite.trainers.row_batches import RowBatches, ScoredBatch
from agentgym_suite.trainers.episode_metrics import batch_record, completion_records, episode_metrics_of, reward_of
from agentgym_suite.trainers.rows import build_rows
from agentgym_suite.trainers.step_profile import StepTimer
from agentgym_suite.trainers.training_tasks import (  # noqa: F401  (default_env_factory, resolve_model_path: public here too)
    build_task_dataset,
    check_group_layout,
    check_whole_groups,
    default_env_factory,
    resolve_model_path,
)
from agentgym_suite.trainers.trajectory_log import TrajectoryLog
from agentgym_suite.trainers.vllm_rollout import (
    check_server_mode_device,
    combine_sampling_stats,
    importance_sampling,
    vllm_rollout,
)


logger = logging.getLogger(__name__)

TRAINER_INFO_KEYS = INFO_SUBSET + ("task", "task_family")
"""``info`` keys the rollout records keep: the engine's defaults, the task text and the task's family (skills)."""


def episode_return(*_: Any, **__: Any) -> list[float]:
    """Placeholder reward function: the trainer scores episodes itself, so TRL never calls it."""
    raise RuntimeError("AgentGRPOTrainer scores episodes from the env; this reward function is never called.")


class AgentGRPOTrainer(MicroBatchLoss, StepTimer, LogprobPasses, RowBatches, PolicyLoan, GRPOTrainer):
    """Multi-turn GRPO on suite envs with pluggable credit assignment.

    Args:
        model: model path/id or loaded model; default ``args.model_name_or_path``.
        args: an :class:`AgentGRPOConfig`.
        train_dataset: rows with ``task_id`` and ``env_seed``; default: every task of the env.
        processing_class: tokenizer; default loaded from the model path.
        env_factory: zero-argument callable returning a fresh env; default ``gymnasium.make``
            of ``args.train_env_id``. The credit plug-in's ``wrap_env_factory`` is applied to it
            (SkillRise plays trials of several tasks).
        credit: a credit plug-in instance; default built from ``args.credit``/``args.credit_params``.
        callbacks: TRL/transformers callbacks (logging only).
        eval_dataset: held-out tasks (``task_id``, optionally ``env_seed``) for ``eval_strategy``; default from
            ``eval_env_kwargs``/``eval_task_ids`` (see :mod:`~agentgym_suite.trainers.held_out_eval`).
        eval_env_factory: makes a held-out env; default: ``args.train_env_id`` with
            ``eval_env_kwargs``, or ``env_factory`` when one is given.

    The methods are in the order one generation batch runs through them (see the module
    docstring): construction, then the rollout, score, loss and log phases, then evaluation. The
    phases' helpers and TRL's per-micro-batch step are in the mixins of the bases; their order
    matters: ``MicroBatchLoss`` wraps ``StepTimer``'s ``_prepare_inputs``/``training_step`` (as this
    class did before they moved), and ``LogprobPasses`` comes after ``MicroBatchLoss``, so its
    ``super()._get_per_token_logps_and_entropies`` is TRL's, uncaptured.
    """

    _tag_names = [*GRPOTrainer._tag_names, "agentgym-suite"]  # TRL's tags (trl, its algorithm) and ours

    # ================================================================== construction
    def __init__(
        self,
        model: Any = None,
        args: AgentGRPOConfig | None = None,
        train_dataset: Dataset | None = None,
        processing_class: Any = None,
        env_factory: Callable[[], gym.Env] | None = None,
        credit: CreditAssigner | None = None,
        callbacks: list[Any] | None = None,
        eval_dataset: Dataset | None = None,
        eval_env_factory: Callable[[], gym.Env] | None = None,
        **kwargs: Any,
    ) -> None:
        if args is None:
            raise ValueError("AgentGRPOTrainer needs args=AgentGRPOConfig(...); see configs/ for examples.")
        if not isinstance(args, AgentGRPOConfig):
            raise TypeError(f"args must be an AgentGRPOConfig, got {type(args).__name__}.")
        check_trl_seam()  # a TRL that moved a member the trainer overrides or uses fails here, naming it
        check_server_mode_device(args)  # before TRL waits for a server whose weights it could not update
        model = model if model is not None else resolve_model_path(args.model_name_or_path)
        if processing_class is None:
            path = model if isinstance(model, str) else model.config._name_or_path
            processing_class = AutoTokenizer.from_pretrained(path)
        if processing_class.pad_token_id is None:
            processing_class.pad_token = processing_class.eos_token
        self.credit = credit if credit is not None else build_credit(args)
        self.env_factory = self.credit.wrap_env_factory(env_factory or default_env_factory(args, self.credit), args.env_id)
        if train_dataset is None:
            probe = self.env_factory()
            try:
                train_dataset = build_task_dataset(args, probe)
            finally:
                probe.close()
        self.eval_env_factory = eval_env_factory or env_factory or default_env_factory(args, self.credit, held_out=True)
        if eval_dataset is None:
            eval_dataset = held_out.default_dataset(args, self.eval_env_factory, custom_env=env_factory is not None)
        self._envs: list[Any] = []
        """The envs of the last rollout (``gymnasium.Env`` objects inline, handles when they live in workers)."""
        self.run_context = run_context(args)
        """What the config's settings resolve to (the plug-in class, the parsed ``env_workers``), resolved once."""
        self._env_pool = EnvPool(args.step_timeout, workers=self.run_context.env_workers)
        """Where the training and held-out envs live (``env_workers``), reused from rollout to rollout;
        every rollout engine the trainer makes is given it."""
        self._credit_batch: CreditBatch | None = None
        self._captured_logps: torch.Tensor | None = None
        self._captured_entropies: torch.Tensor | None = None
        self._generation_rows = 0
        self._capture = False
        self._traj_log: TrajectoryLog | None = None
        self._policy_borrowers: set[int] = set()
        self._untrained_roles_warned: set[str] = set()
        self._last_rollout_stats: Any = None
        if args.lora_r and kwargs.get("peft_config") is None:
            kwargs["peft_config"] = lora_config(args.lora_r)
        super().__init__(
            model=model,
            reward_funcs=[episode_return],
            args=args,
            train_dataset=train_dataset,
            processing_class=processing_class,
            callbacks=callbacks,
            eval_dataset=eval_dataset,
            **kwargs,
        )
        self.env_id = args.train_env_id
        self.sync = ProcessSync(self.accelerator)
        """The processes' collectives: global credit, lockstep turns and padding, gathered metrics."""
        check_whole_groups(args, self.train_dataset, self.sync.world_size)
        self._take_over_loss_terms(args)
        check_loss_settings(self.loss_type, bounded=args.max_rows_per_pass is not None,
                            entropy_bonus=self._entropy_bonus_enabled, router_aux_loss=self.aux_loss_enabled)
        self.held_out = held_out.HeldOutEvaluation(self.eval_env_factory, self._play, self.sync, pool=self._env_pool,
                                                   env_id=self.env_id)
        self.teacher_context: TeacherContext | None = None
        """The plug-in's teacher context (its declared ``teacher_context``); ``args.skills_origin`` names its texts' source."""
        if self.credit.needs_teacher_logprobs or self.credit.needs_full_logits:  # a teacher pass: its context
            self.teacher_context = self.credit.make_teacher_context(
                TeacherSettings(args.teacher_context, args.skills_dir, args.env_id, env_factory))
            args.skills_origin = self.teacher_context.origin
        self.fixed_teacher: FixedTeacher | None = (
            self._build_fixed_teacher() if self.credit.needs_fixed_teacher else None
        )  # built before any update or resume: the initial weights
        self._init_step_timer(print_lines=args.print_step_times)  # per-step time profile (trainers.step_profile)
        self._pass_checkpointing = cpu_speed.PassCheckpointing(args, self.accelerator.unwrap_model(self.model).config)
        """CPU runs: gradient checkpointing off for the passes that fit (``cpu_gradient_checkpointing``)."""
        self._async = build_async_rollouts(LearnerSide(
            args, tasks=self.train_dataset, group_size=int(self.num_generations),
            policy=lambda: self.accelerator.unwrap_model(self.model), env_factory=self.env_factory, env_id=self.env_id,
            tokenizer=self.processing_class, info_keys=TRAINER_INFO_KEYS,
            record_oracle=self.records_oracle, sync=self.sync,
            record=lambda key, value: self._metrics["train"][key].append(value)), self.credit)
        """``async_rollouts``: the queue, the generator's weights and the rollout thread (None: synchronous)."""
        if self._async is not None:
            self.add_callback(self._async.callback)

    def create_accelerator_and_postprocess(self) -> None:
        """transformers', then FSDP2 on CPU processes where FSDP was asked for and accelerate left it off
        (:func:`~agentgym_suite.trainers.fsdp2.adopt_fsdp_on_cpu`: shard, or refuse FSDP1 with what to do)."""
        super().create_accelerator_and_postprocess()
        self.is_fsdp_enabled = fsdp2.adopt_fsdp_on_cpu(self.accelerator, self.args) or self.is_fsdp_enabled

    def _build_fixed_teacher(self) -> FixedTeacher:
        """The fixed weights teacher passes run on (:mod:`~agentgym_suite.trainers.fixed_teacher`)."""
        policy = self.accelerator.unwrap_model(self.model)
        return build_fixed_teacher(
            policy, self.accelerator, ref_model=self.ref_model, ref_model_synced=bool(self.args.sync_ref_model),
            frozen_copy=lambda: frozen_copy(policy, self.args, self.accelerator, temperature=self.temperature,
                                            deepspeed=bool(self.is_deepspeed_enabled), fsdp=bool(self.is_fsdp_enabled)))

    @property
    def records_oracle(self) -> bool:
        """The rollouts record the env's oracle per turn: the teacher context reads it."""
        return self.teacher_context is not None and self.teacher_context.records_oracle

    def train(self, resume_from_checkpoint: str | bool | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Train; ``resume_from_checkpoint=True`` resumes from the last *complete* checkpoint.

        A run killed mid-save leaves a partial ``checkpoint-N``, which is skipped (its step is
        trained again and saved over it). With no complete checkpoint yet, training starts from
        step 0 with a warning, so ``agentgym train --resume`` can be re-run after any kill.
        """
        if resume_from_checkpoint is True:
            from agentgym_suite.trainers.checkpoints import last_complete_checkpoint

            resume_from_checkpoint = last_complete_checkpoint(self.args.output_dir)
            if resume_from_checkpoint is None:
                logger.warning("no complete checkpoint in %s; training starts from step 0.", self.args.output_dir)
        if self._async is not None:
            self._async.resume_from(resume_from_checkpoint)
        try:
            return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)
        finally:
            if self._async is not None:
                self._async.stop()
            self._env_pool.close()  # training and held-out envs and their workers; a later rollout makes new ones

    def save_merged(self, path: str) -> str:
        """Save the policy as a plain model at ``path`` (a LoRA adapter merged into a copy of the
        weights; the trainer's own model is left as it is) with its tokenizer; returns ``path``."""
        import copy

        model = self.accelerator.unwrap_model(self.model)
        if hasattr(model, "merge_and_unload"):
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(path)
        if self.processing_class is not None:
            self.processing_class.save_pretrained(path)
        return path

    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt", "task_id", "env_seed"]

    # ================================================================== one generation batch (the TRL seam)
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """One generation batch, in four phases: play the episodes (:meth:`_rollout_phase`), turn
        them into rows and score them with the credit plug-in (:meth:`_score_phase`), prepare what
        TRL's loss reads for the rows that are trained (:meth:`_loss_phase`), and log the batch
        (:meth:`_log_phase`). TRL buffers the returned tensors and cuts them into micro-batches."""
        mode = "train" if self.model.training else "eval"
        episodes, played = self._rollout_phase(inputs, mode)
        scored = self._score_phase(episodes, mode)
        loss_inputs = self._loss_phase(scored, mode)
        self._log_phase(mode, played, scored)
        return loss_inputs

    # ------------------------------------------------------------------ phase 1: rollout
    def _rollout_phase(self, inputs: list[dict[str, Any]], mode: str) -> tuple[list[Trajectory], list[Trajectory]]:
        """This process's share of the batch played: G episodes per task and, with
        ``dynamic_sampling``, groups of new tasks in place of those that teach nothing. Returns the
        episodes to train on and every episode played (the log counts them all)."""
        num_generations = self.num_generations if mode == "train" else self.num_generations_eval
        if mode == "train" and self._async is not None:  # finished groups from the queue (trainers.async_rollouts)
            return self._async.rollout_phase(inputs, num_generations, self.state.global_step)
        played = episodes = self._rollout(inputs, num_generations)
        if mode == "train" and self.args.dynamic_sampling:
            episodes, played = self._dynamic_sampling(inputs, episodes, num_generations)
        return episodes, played

    def _rollout(self, inputs: list[dict[str, Any]], num_generations: int, round_: int = 0) -> list[Trajectory]:
        """Multi-turn rollouts for this process's share of a generation batch, played by the suite's
        :class:`~agentgym_suite.rollout.RolloutEngine` on the trainer's reused envs.

        Groups are numbered by position in the whole generation batch (G consecutive rollouts =
        one group; this process's share starts at ``rank * len(inputs)``), so a group split
        between processes keeps one id and its baseline sees all of its rollouts. ``round_`` > 0
        numbers a dynamic-sampling round of replacement groups (ids ``step.round:index``)."""
        step = self.state.global_step if round_ == 0 else f"{self.state.global_step}.{round_}"
        offset = self.sync.rank * len(inputs)
        check_group_layout(inputs, num_generations, offset)
        specs = [
            EpisodeSpec(task_id=str(x["task_id"]), seed=int(x["env_seed"]),
                        group_id=f"{step}:{(offset + i) // num_generations}", traj_id=f"{step}:{offset + i}",
                        attempt=(offset + i) % num_generations)  # the member: a group shares its reset seed
            for i, x in enumerate(inputs)
        ]
        # a fresh seed per rollout, drawn from the trainer's RNG: the backend restores the global RNG
        # after generating, so unseeded rollouts would replay the same draws every step; the RNG
        # state is checkpointed, so a resumed run draws the same seeds
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        # envs are reused across rollouts; those whose episode failed on the env side, or whose worker
        # died, are replaced here (where they run: args.env_workers)
        envs = self._envs = self._env_pool.get_made(self.env_factory, len(specs), env_id=self.env_id)
        trajectories = self._play(envs, specs, None, seed)
        stats = self._last_rollout_stats
        if stats is not None:
            self.step_profile.add("rollout_generation", stats.generate_s)
            self.step_profile.add("env_steps", stats.wall_s - stats.generate_s)
        self._env_pool.distrust(envs, trajectories)
        return trajectories

    def _play(self, envs: list[gym.Env], specs: list[EpisodeSpec], temperature: float | None,
              seed: int) -> list[Trajectory]:
        """One rollout with the current policy (training, or held-out evaluation at ``temperature``)
        on envs of the trainer's pool, which the engine is given."""
        args: AgentGRPOConfig = self.args
        params, generation_kwargs = rollout_sampling(
            args, temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, min_p=self.min_p,
            repetition_penalty=self.repetition_penalty, max_new_tokens=self.max_completion_length, seed=seed)
        if temperature is not None:  # held-out evaluation: its temperature wins over generation_kwargs
            params = replace(params, temperature=float(temperature))
        with self._policy_backend(generation_kwargs, temperature) as backend:
            self._lend_policy(envs, backend)
            engine = RolloutEngine(
                backend, mode=args.prompt_format, sampling=params, max_turns=args.max_turns,
                history_length=args.history_length, info_keys=TRAINER_INFO_KEYS,
                record_oracle=self.records_oracle,
                max_prompt_tokens=args.max_prompt_tokens, lockstep=self.sync.any if self.sync.distributed else None,
                env_pool=self._env_pool,
            )
            try:
                return engine.run(envs, specs, env_id=self.env_id)
            finally:
                self._last_rollout_stats = engine.stats

    @contextmanager
    def _policy_backend(self, generation_kwargs: dict[str, Any], temperature: float | None) -> Iterator[Any]:
        """The generation backend over the weights being trained, for one rollout
        (:mod:`~agentgym_suite.trainers.generation`): TRL's vLLM generator (weights pushed once,
        engine awake throughout; ``temperature`` overrides TRL's for this rollout), or the
        transformers model unwrapped as TRL does (ZeRO-3 gathering, FSDP1 ``summon_full_params``),
        in lockstep over processes."""
        if self.use_vllm:
            with vllm_rollout(self.vllm_generation, push_weights=self.state.global_step != self._last_loaded_step,
                              temperature=temperature):
                self._last_loaded_step = self.state.global_step
                yield TRLVLLMBackend(self.vllm_generation, self.processing_class, self.eos_token_ids, sync=self.sync,
                                     chat_template_kwargs=template_kwargs(self.args))
            return
        from trl.models import unwrap_model_for_generation

        from agentgym_suite.llm.transformers_backend import TransformersBackend

        args = self.args
        with unwrap_model_for_generation(
            self.model_wrapped, self.accelerator, gather_deepspeed3_params=args.ds3_gather_for_generation,
            gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs,
        ) as unwrapped, torch.no_grad(), self._dist.summon_full_params(self.model_wrapped, recurse=False):
            backend: Any = TransformersBackend(unwrapped, self.processing_class, max_batch_size=1 << 20,
                                               name="policy", generation_kwargs=generation_kwargs,
                                               chat_template_kwargs=template_kwargs(args))
            if self.sync.distributed:
                backend = LockstepBackend(backend, int(self.processing_class.pad_token_id))
            was_training = unwrapped.training
            unwrapped.eval()
            try:
                yield backend
            finally:
                unwrapped.train(was_training)

    def _dynamic_sampling(self, inputs: list[dict[str, Any]], episodes: list[Trajectory],
                          num_generations: int) -> tuple[list[Trajectory], list[Trajectory]]:
        """DAPO's dynamic sampling (:mod:`~agentgym_suite.trainers.dynamic_sampling`): the episodes to
        train on and every episode played this step; the step's counts go to the metrics."""
        args: AgentGRPOConfig = self.args
        played = list(episodes)

        def play_more(groups_per_process: int, round_: int) -> list[Trajectory]:
            tasks = self._replacement_tasks(groups_per_process * self.sync.world_size)
            mine = tasks[self.sync.rank * groups_per_process:(self.sync.rank + 1) * groups_per_process]
            new = self._rollout([task for task in mine for _ in range(num_generations)], num_generations,
                                round_=round_)
            played.extend(new)
            return new

        bound = args.dynamic_sampling_max_rollouts
        kept, stats = fill_batch(
            episodes, target_groups=len(inputs) * self.sync.world_size // num_generations,
            group_size=num_generations, play_more=play_more, sync=self.sync,
            max_extra_rollouts=2 * args.generation_batch_size if bound is None else bound)
        for key, value in stats.metrics().items():
            self._metrics["train"][key].append(value)
        return kept, played

    def _replacement_tasks(self, count: int) -> list[dict[str, Any]]:
        """``count`` training tasks drawn with the trainer's RNG (checkpointed, so a resumed run draws
        the same), the same on every process (rank 0's draw)."""
        dataset = self.train_dataset
        drawn = torch.randint(0, len(dataset), (count,)).tolist()
        drawn = self.sync.gather(drawn)[0]
        return [{"task_id": dataset[i]["task_id"], "env_seed": dataset[i]["env_seed"]} for i in drawn]

    # ------------------------------------------------------------------ phase 2: score
    def _score_phase(self, episodes: list[Trajectory], mode: str) -> ScoredBatch:
        """The trainable episodes as rows (broken episodes give none, see the module docstring),
        padded to the same row count on every process, and their per-token advantages from the
        credit plug-in over every process's rows, after the no-gradient passes the plug-in declares
        it reads (old log-probs, teacher log-probs, teacher logits)."""
        args: AgentGRPOConfig = self.args
        trainable = [t for t in episodes if not t.broken]
        families = [str(t.reset_info.get("task_family") or "") for t in trainable]
        rows = build_rows(trainable, args.row_layout, generation_roles=self._generation_roles(trainable), families=families)
        real = len(rows)
        pad_id = int(self.processing_class.pad_token_id)
        n_pad = padding_rows(real, self.sync.max(real), self._micro_batches(mode))  # the same count on every process
        batch = self._padded_rows(rows, n_pad, pad_id)
        loss_mask = batch["loss_mask"]
        width = batch["completion_ids"].size(1)
        bs = self._pass_rows(mode)
        old_logps = teacher_logps = None
        aux: dict[str, torch.Tensor] = {}
        with torch.no_grad(), self.step_profile.timed("logprob_passes"):  # what the plug-in reads, on every row
            if self.credit.needs_old_logprobs:
                old_logps = self._logps(self.model, batch["input_ids"], batch["attention_mask"], width, bs)
            if self.credit.needs_teacher_logprobs:
                teacher_logps = self._teacher_logps(rows, batch["comp_ids"], n_pad, pad_id, width, bs)
            if self.credit.needs_full_logits:
                aux = self._teacher_logits(rows, n_pad, pad_id, batch["completion_ids"], bs)
        credit_batch = self._credit_batch_for(rows, loss_mask, old_logps, teacher_logps, aux)
        credit = credit_over_processes(self.credit, credit_batch, self.sync, [r.episode.task_id for r in rows])
        self._generation_rows = int(credit.total_rows)
        advantages = torch.zeros(loss_mask.shape, dtype=torch.float32, device=self.accelerator.device)
        advantages[:real] = credit.advantages.to(advantages.device)
        advantages = torch.where(loss_mask.bool(), advantages, torch.zeros_like(advantages))
        self._credit_batch = credit_batch
        num_items = self.accelerator.gather(loss_mask.sum()).sum()  # of every row: skipped rows still count
        return ScoredBatch(rows=rows, batch=batch, n_pad=n_pad, credit_batch=credit_batch, advantages=advantages,
                           old_logps=old_logps, credit_metrics=credit.metrics, total_rows=int(credit.total_rows),
                           num_items=num_items)

    def _micro_batches(self, mode: str) -> int:
        """Micro-batches TRL cuts a generation batch into: padding makes the row count a multiple."""
        return self.args.steps_per_generation if mode == "train" else 1

    def _pass_rows(self, mode: str) -> int:
        """Rows per no-gradient log-prob pass."""
        args: AgentGRPOConfig = self.args
        return args.max_rows_per_pass or (
            args.per_device_train_batch_size if mode == "train" else args.per_device_eval_batch_size)

    # ------------------------------------------------------------------ phase 3: loss (inputs of TRL's loss)
    def _loss_phase(self, scored: ScoredBatch, mode: str) -> dict[str, Any]:
        """What TRL's loss reads, for the rows that go through the forward and backward passes
        (:meth:`_rows_to_train`): their padded tensors, advantages, the old-policy and reference
        log-probs the loss needs, and with vLLM the sampling log-probs and TRL's importance-sampling
        ratio. ``row_index`` maps each trained row back to the credit batch (-1: padding)."""
        args: AgentGRPOConfig = self.args
        device = self.accelerator.device
        index, batch, n_pad, advantages, old_logps = self._trained_rows(scored, mode)
        loss_mask = batch["loss_mask"]
        width = batch["completion_ids"].size(1)
        bs = self._pass_rows(mode)
        correct_vllm = self.use_vllm and self.vllm_importance_sampling_correction
        generate_every = args.steps_per_generation * self.num_iterations
        need_old = args.gradient_accumulation_steps % generate_every != 0 or self.credit.needs_old_logprobs \
            or correct_vllm or args.rows_per_update is not None \
            or (self._async is not None and self._async.needs_learner_logps)  # later updates / async: scoring-time policy
        ref_logps = None
        with torch.no_grad(), self.step_profile.timed("logprob_passes"):  # what TRL's loss reads, on trained rows
            if need_old and old_logps is None:
                old_logps = self._logps(self.model, batch["input_ids"], batch["attention_mask"], width, bs)
            if self.beta != 0.0 or self._kl_coef:
                ref_logps = self._ref_logps(batch["input_ids"], batch["attention_mask"], width, bs)
        output: dict[str, Any] = {
            "prompt_ids": batch["prompt_ids"],
            "prompt_mask": batch["prompt_mask"],
            "completion_ids": batch["completion_ids"],
            "completion_mask": batch["completion_mask"],
            "advantages": advantages,
            "num_items_in_batch": scored.num_items,
            GLOBAL_ROWS: torch.tensor(scored.total_rows, device=device),
            # the row's index in the credit batch (aux losses read it); -1: padding
            "row_index": torch.cat([index, torch.full((n_pad,), -1)]).to(device),
        }
        if args.row_layout == "trajectory":
            output["tool_mask"] = batch["env_mask"]
        if old_logps is not None:
            output["old_per_token_logps"] = old_logps
        if ref_logps is not None:
            output["ref_per_token_logps"] = ref_logps
        if self.use_vllm:
            output["sampling_per_token_logps"] = batch["sampling_logps"]
        if mode == "train" and self._async is not None:  # stale samples corrected (trainers.async_rollouts)
            output = self._async.loss_inputs(output, old_logps, batch["sampling_logps"], loss_mask)
        if correct_vllm:
            output["importance_sampling_ratio"] = self._importance_sampling_ratio(mode, old_logps,
                                                                                  batch["sampling_logps"], loss_mask)
        return output

    def _importance_sampling_ratio(self, mode: str, old: torch.Tensor, sampling: torch.Tensor,
                                   mask: torch.Tensor) -> torch.Tensor:
        """TRL's vLLM importance-sampling ratio with the trainer's settings
        (:func:`~agentgym_suite.trainers.vllm_rollout.importance_sampling`); its statistics, reduced
        over processes as TRL does, go to the metrics."""
        ratio, stats = importance_sampling(
            old, sampling, mask, mode=self.vllm_importance_sampling_mode,
            clip_min=self.vllm_importance_sampling_clip_min, clip_max=self.vllm_importance_sampling_clip_max)
        gathered = self.sync.gather({key: float(value) for key, value in stats.items()})
        for key, value in combine_sampling_stats(gathered).items():
            self._metrics[mode][key].append(value)
        return ratio

    # ------------------------------------------------------------------ phase 4: log
    def _log_phase(self, mode: str, played: list[Trajectory], scored: ScoredBatch) -> None:
        """Metrics of the whole generation batch (every process's episodes, every episode played)
        and the plug-in's metrics into TRL's ``_metrics``, the step's trajectory file
        (``save_trajectories``), and with ``log_completions`` the completions table TRL writes on
        the main process (one line per row of every process)."""
        real = len(scored.rows)
        parts = self.sync.gather(batch_record(played, scored.rows))
        for key, value in {**episode_metrics_of(parts), **scored.credit_metrics}.items():
            self._metrics[mode][key].append(float(value))
        self._metrics[mode]["reward"].append(reward_of(parts))
        if mode == "train" and self.args.save_trajectories:
            self._trajectory_log().write_step(self.state.global_step + 1, played)
        if not self.log_completions:
            return
        advantages, mask = scored.advantages[:real], scored.batch["loss_mask"][:real]
        row_advantages = ((advantages * mask).sum(1) / mask.sum(1).clamp(min=1)).tolist()
        table = [line for part in self.sync.gather(completion_records(scored.rows, row_advantages)) for line in part]
        # one table per generation batch, as many lines as it has rows (TRL's columns hold one line per episode)
        logs, reward_name = self._logs, self.reward_func_names[0]
        logs["prompt"], logs["completion"], logs["advantages"] = deque(), deque(), deque()
        logs["rewards"][reward_name] = deque()
        for line in table:
            logs["prompt"].append(line["prompt"])
            logs["completion"].append(line["completion"])
            logs["rewards"][reward_name].append(line["return"])
            logs["advantages"].append(line["advantage"])

    def _trajectory_log(self) -> TrajectoryLog:
        if self._traj_log is None:
            self._traj_log = TrajectoryLog(os.path.join(self.args.output_dir, "trajectories"),
                                           rank=self.accelerator.process_index)
        return self._traj_log

    # ================================================================== per micro-batch: TRL's training step
    # _prepare_inputs, training_step, compute_loss, _compute_loss and the loss terms: MicroBatchLoss
    # (trainers/micro_batch_loss.py), in the order TRL calls them.

    # ================================================================== logging and evaluation
    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:  # type: ignore[override]
        """TRL's logging, with every metric averaged over all processes (not rank 0's values only)."""
        mode = "train" if self.model.training else "eval"
        if self.sync.distributed:
            means = self.sync.mean_metrics(self._metrics[mode])
            self._metrics[mode].clear()
            self._metrics[mode].update({key: [value] for key, value in means.items()})
        super().log(logs, start_time)

    def evaluate(self, eval_dataset: Any = None, ignore_keys: list[str] | None = None,
                 metric_key_prefix: str = "eval") -> dict[str, float]:
        """Play the held-out tasks with the current policy, write their trajectories
        (``<output_dir>/eval_trajectories/``), log their success as ``<metric_key_prefix>_success_rate``
        as an eval record of the run's log and tell the callbacks (see
        :mod:`~agentgym_suite.trainers.held_out_eval`). The training batch, the stored credit batch
        and the training metrics are not touched."""
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        if isinstance(dataset, dict):
            return {k: v for name, part in dataset.items()
                    for k, v in self.evaluate(part, ignore_keys, f"{metric_key_prefix}_{name}").items()}
        if dataset is None:
            raise ValueError("evaluation needs held-out tasks: set eval_env_kwargs or eval_task_ids, or pass "
                             "eval_dataset.")
        args: AgentGRPOConfig = self.args
        step = self.state.global_step
        metrics, played = self.held_out.run(
            dataset, episodes_per_task=int(self.num_generations_eval), per_call=args.per_device_eval_batch_size,
            temperature=args.eval_temperature, seed=held_out.sampling_seed(args.seed, step),
            run_seed=int(args.seed), step=step,
            prefix=metric_key_prefix)
        if args.save_trajectories:
            TrajectoryLog(os.path.join(args.output_dir, "eval_trajectories"), rank=self.sync.rank).write_step(step,
                                                                                                          played)
        was_training = self.model.training
        self.model.eval()  # TRL's log() takes the mode from the model: an eval record, training metrics kept
        try:
            self.log(dict(metrics))
        finally:
            self.model.train(was_training)
        self.control = self.callback_handler.on_evaluate(args, self.state, self.control, metrics)
        return metrics


def lora_config(rank: int) -> Any:
    """The LoRA adapter of ``lora_r``: every linear layer, alpha 2*rank, no dropout."""
    try:
        from peft import LoraConfig
    except ImportError as exc:
        raise ImportError("lora_r > 0 needs peft: pip install peft (or set lora_r: 0 for full fine-tuning).") from exc
    return LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")



def build_credit(args: AgentGRPOConfig) -> CreditAssigner:
    """The plug-in ``args`` names (``credit``, resolved when the config was built; ``credit_params``,
    ``invalid_action_penalty``), built by the registry
    (:func:`~agentgym_suite.trainers.credit.build_credit_assigner`)."""
    return build_credit_assigner(run_context(args).credit_class, args.credit_params,
                                 invalid_action_penalty=args.invalid_action_penalty)

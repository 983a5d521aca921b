"""``AgentGRPOTrainer``: TRL's ``GRPOTrainer`` trained on multi-turn episodes.

What changes relative to TRL, and where:

* ``_generate_and_score_completions`` — each generation batch (``generation_batch_size``
  dataset rows = tasks, each repeated G times by TRL's sampler) is produced by multi-turn
  rollouts of G envs per task (played by the suite's ``RolloutEngine``, whose ``Trajectory``
  records are the one record type), turned into rows (``row_layout``), and scored by the credit
  plug-in, whose per-token advantages ``(R, T)`` replace TRL's per-sequence ones. TRL's
  reference-model KL, old log-probs and PPO-clip loss are used unchanged.
* ``_compute_loss`` — calls TRL's loss and adds the plug-in's auxiliary loss, computed from the
  same per-token log-probs TRL computed (captured, not recomputed). Plug-ins that distil whole
  distributions (``vad``) get the teacher's logits with and without the evidence (top-k, once
  per generation batch) and the student's logits from one extra forward pass per micro-batch
  (TRL's fused LM head returns log-probs only).
* Rehearsal envs (``EnvACE-Rehearsal-v0``) made with ``world_model: policy`` get the policy's
  generation backend as world model before every rollout; with the ``envace`` plug-in the
  world model's generations are trained as ``simulator`` rows.

Broken episodes (``Trajectory.broken``: the env raised in reset or step, a generation failed or
came back malformed, the env reported an error without terminating, e.g. a step timeout) are
dropped before the rows are built — masked out, not given a zero advantage: they get no gradient,
not even for the turns before the failure, and are left out of their group's baseline, so a
partial return never reads as a real outcome. They are still written to the step's trajectory
file with the reason in ``error`` and counted in ``episodes/error_rate``. An env that terminates
an episode with an error (EnvACE's malformed tool call) has scored the agent's play; that
episode is trained on.

The number of rows per generation batch varies with episode length; it is padded with
all-masked rows to a multiple of ``steps_per_generation`` so TRL can split it evenly. With a
token-mean loss (``loss_type`` dapo, the default, or bnpo) padding rows change nothing.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
from dataclasses import replace
from typing import Any, Callable

import gymnasium as gym
import torch
from datasets import Dataset
from transformers import AutoTokenizer
from trl import GRPOTrainer
from trl.models import unwrap_model_for_generation

from agentgym_suite.llm.base import SamplingParams
from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine, Trajectory
from agentgym_suite.rollout.records import INFO_SUBSET
from agentgym_suite.envs.rehearsal.world_model import POLICY
from agentgym_suite.trainers.batching import length_sorted_chunks, trim_left_padding
from agentgym_suite.trainers.config import REHEARSAL_ENV_ID, AgentGRPOConfig
from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch
from agentgym_suite.trainers.logits import completion_logits, teacher_logits
from agentgym_suite.trainers.metrics import episode_metrics
from agentgym_suite.trainers.rows import Row, build_rows, pad_left, pad_right
from agentgym_suite.trainers.teacher import (
    env_response_text,
    oracle_text,
    privileged_prefix,
    skill_text,
    teacher_prompt_ids,
)
from agentgym_suite.trainers.trajectory_log import TrajectoryLog


logger = logging.getLogger(__name__)

TRAINER_INFO_KEYS = INFO_SUBSET + ("task", "task_family")
"""``info`` keys the rollout records keep: the engine's defaults, the task text and the task's family (skills)."""

SIMULATOR_ROLE = "simulator"
"""Role of the rows built from a rehearsal env's world-model generations; a plug-in whose ``roles``
include it trains them."""


def resolve_model_path(name: str) -> str:
    """``tiny`` -> the suite's tiny test model directory; anything else unchanged."""
    if name == "tiny":
        from agentgym_suite.llm.tiny import tiny_model_dir

        return str(tiny_model_dir())
    return name


def episode_return(*_: Any, **__: Any) -> list[float]:
    """Placeholder reward function: the trainer scores episodes itself, so TRL never calls it."""
    raise RuntimeError("AgentGRPOTrainer scores episodes from the env; this reward function is never called.")


def default_env_factory(args: AgentGRPOConfig) -> Callable[[], gym.Env]:
    """A factory for the env ``args`` trains on (after ``env_mode``), failing early and clearly."""
    import agentgym_suite  # noqa: F401  (registers every implemented env id)

    env_id = args.train_env_id
    if env_id not in gym.registry:
        why = {
            "synthetic": "env_mode=synthetic trains on SyntheticTools-v0",
            "rehearsal": "env_mode=rehearsal trains on EnvACE-Rehearsal-v0",
        }.get(args.env_mode, f"env_id={env_id}")
        raise ValueError(
            f"{why}, but {env_id!r} is not registered in this install (its module is missing). "
            "Run `agentgym list` to see which env ids are ready, or choose env_mode=real with a ready env_id."
        )
    kwargs = dict(args.env_kwargs or {})
    if args.env_mode == "rehearsal":
        kwargs.setdefault("base_env_id", args.env_id)
    if env_id == REHEARSAL_ENV_ID:
        kwargs.setdefault("world_model", POLICY)
    if args.action_format and "action_format" not in kwargs and _accepts(env_id, "action_format"):
        kwargs["action_format"] = args.action_format

    # a partial, not a closure over args: env worker processes and Ray actors receive it pickled
    return functools.partial(gym.make, env_id, max_episode_steps=args.max_turns, **kwargs)


def _accepts(env_id: str, name: str) -> bool:
    entry = gym.spec(env_id).entry_point
    cls = gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def build_task_dataset(args: AgentGRPOConfig, env: gym.Env) -> Dataset:
    """One dataset row per task: ``task_id`` and the env seed its group shares."""
    ids = list(args.task_ids) if args.task_ids else list(env.unwrapped.task_ids())
    if args.num_tasks is not None:
        ids = ids[: args.num_tasks]
    if not ids:
        raise ValueError(f"{args.train_env_id} has no tasks to train on; check env_kwargs (split) and task_ids.")
    seeds = [int(args.seed) * 1_000_003 + i for i in range(len(ids))]
    return Dataset.from_dict({"prompt": [f"task {t}" for t in ids], "task_id": ids, "env_seed": seeds})


class AgentGRPOTrainer(GRPOTrainer):
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
    """

    _tag_names = ["trl", "grpo", "agentgym-suite"]

    def __init__(
        self,
        model: Any = None,
        args: AgentGRPOConfig | None = None,
        train_dataset: Dataset | None = None,
        processing_class: Any = None,
        env_factory: Callable[[], gym.Env] | None = None,
        credit: CreditAssigner | None = None,
        callbacks: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if args is None:
            raise ValueError("AgentGRPOTrainer needs args=AgentGRPOConfig(...); see configs/ for examples.")
        if not isinstance(args, AgentGRPOConfig):
            raise TypeError(f"args must be an AgentGRPOConfig, got {type(args).__name__}.")
        model = model if model is not None else resolve_model_path(args.model_name_or_path)
        if processing_class is None:
            path = model if isinstance(model, str) else model.config._name_or_path
            processing_class = AutoTokenizer.from_pretrained(path)
        if processing_class.pad_token_id is None:
            processing_class.pad_token = processing_class.eos_token
        self.credit = credit if credit is not None else build_credit(args)
        self.env_factory = self.credit.wrap_env_factory(env_factory or default_env_factory(args), args.env_id)
        if train_dataset is None:
            probe = self.env_factory()
            try:
                train_dataset = build_task_dataset(args, probe)
            finally:
                probe.close()
        self._envs: list[Any] = []
        """The envs of the last rollout (``gymnasium.Env`` objects inline, handles when they live in workers)."""
        self._env_pool = EnvPool(workers=args.env_workers)
        self._credit_batch: CreditBatch | None = None
        self._captured_logps: torch.Tensor | None = None
        self._capture = False
        self._traj_log: TrajectoryLog | None = None
        self._policy_world: set[int] = set()
        super().__init__(
            model=model,
            reward_funcs=[episode_return],
            args=args,
            train_dataset=train_dataset,
            processing_class=processing_class,
            callbacks=callbacks,
            **kwargs,
        )
        self.env_id = args.train_env_id

    # ------------------------------------------------------------------ resume
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
        try:
            return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)
        finally:
            self._env_pool.close()  # the envs and their worker processes; a later rollout makes new ones

    # ------------------------------------------------------------------ data
    def _set_signature_columns_if_needed(self) -> None:
        if self._signature_columns is None:
            self._signature_columns = ["prompt", "task_id", "env_seed"]

    # ------------------------------------------------------------------ rollouts
    def _rollout(self, inputs: list[dict[str, Any]], num_generations: int) -> list[Trajectory]:
        """Multi-turn rollouts for one generation batch (G consecutive inputs = one group), played by
        the suite's :class:`~agentgym_suite.rollout.RolloutEngine` on the trainer's reused envs."""
        args: AgentGRPOConfig = self.args
        step = self.state.global_step
        rank = self.accelerator.process_index
        specs = [
            EpisodeSpec(task_id=str(x["task_id"]), seed=int(x["env_seed"]),
                        group_id=f"{step}:{rank}:{i // num_generations}", traj_id=f"{step}:{rank}:{i}")
            for i, x in enumerate(inputs)
        ]
        # a fresh seed per rollout, drawn from the trainer's RNG: the backend restores the global RNG
        # after generating, so unseeded rollouts would replay the same draws every step; the RNG
        # state is checkpointed, so a resumed run draws the same seeds
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
        params = SamplingParams(
            n=1, temperature=float(self.temperature), top_p=float(self.top_p or 1.0),
            max_new_tokens=int(self.max_completion_length), seed=seed,
        )
        # envs are reused across rollouts; those whose episode failed on the env side, or whose worker
        # died, are replaced here (where they run: args.env_workers)
        envs = self._envs = self._env_pool.get_made(self.env_factory, len(specs), env_id=self.env_id)

        def run(backend: Any) -> list[Trajectory]:
            self._attach_world_model(envs, backend)
            engine = RolloutEngine(
                backend, mode=args.prompt_format, sampling=params, max_turns=args.max_turns,
                history_length=args.history_length, info_keys=TRAINER_INFO_KEYS,
                record_oracle=self.needs_privileged_text and args.teacher_context == "oracle",
                max_prompt_tokens=args.max_prompt_tokens,
            )
            trajectories = engine.run(envs, specs, env_id=self.env_id)
            self._env_pool.distrust(envs, trajectories)
            return trajectories

        if self.use_vllm:
            from agentgym_suite.trainers.generation import TRLVLLMBackend

            if self.state.global_step != self._last_loaded_step:
                self.vllm_generation.sync_weights()
                self._last_loaded_step = self.state.global_step
            return run(TRLVLLMBackend(self.vllm_generation, self.processing_class, self.eos_token_ids))
        from agentgym_suite.llm.transformers_backend import TransformersBackend

        with unwrap_model_for_generation(
            self.model_wrapped, self.accelerator, gather_deepspeed3_params=self.args.ds3_gather_for_generation,
            gradient_checkpointing_kwargs=self.args.gradient_checkpointing_kwargs,
        ) as unwrapped:
            backend = TransformersBackend(unwrapped, self.processing_class, max_batch_size=max(len(specs), 1),
                                          name="policy")
            was_training = unwrapped.training
            unwrapped.eval()
            try:
                return run(backend)
            finally:
                unwrapped.train(was_training)

    def _attach_world_model(self, envs: list[gym.Env], backend: Any) -> None:
        """Rehearsal envs made with ``world_model: policy`` get the policy's backend as world model.

        The backend wraps the weights being trained (the same object the Caller samples from), so
        the Simulator role is played by the current policy. It is set again before every rollout
        because the backend object is rebuilt each time (under ZeRO-3 the gathered weights differ).
        """
        for env in envs:
            if not isinstance(env, gym.Env):  # an env in a worker never has the policy as world model
                continue
            inner = env.unwrapped
            if not callable(getattr(inner, "set_world_model", None)):
                continue
            world = getattr(inner, "world_model", None)
            if id(inner) not in self._policy_world and not (world is not None and world.spec == POLICY):
                continue
            inner.set_world_model(backend)
            if not self._policy_world and SIMULATOR_ROLE not in self.credit.roles:
                logger.warning("the policy answers the rehearsal env's tool calls, but credit=%s does not train the "
                               "simulator role; use credit: envace to train both roles.", self.credit.name)
            self._policy_world.add(id(inner))

    @property
    def needs_privileged_text(self) -> bool:
        """The plug-in runs a teacher prompt with privileged text (log-probs or VAD's logits)."""
        return bool(self.credit.needs_teacher_logprobs or self.credit.needs_full_logits)

    @property
    def trains_simulator(self) -> bool:
        """True when simulator generations of the policy become ``simulator`` rows (EnvACE).

        That needs a rehearsal env whose world model is the policy and a plug-in whose ``roles``
        include ``simulator`` (``envace``); with another plug-in the policy still answers the tool
        calls, but its simulator generations are not trained on.
        """
        return bool(self._policy_world) and SIMULATOR_ROLE in self.credit.roles

    # ------------------------------------------------------------------ the TRL seam
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        device = self.accelerator.device
        mode = "train" if self.model.training else "eval"
        args: AgentGRPOConfig = self.args
        num_generations = self.num_generations if mode == "train" else self.num_generations_eval
        episodes = self._rollout(inputs, num_generations)
        trainable = [t for t in episodes if not t.broken]  # broken episodes give no rows (module docstring)
        families = [str(t.reset_info.get("task_family") or "") for t in trainable]
        rows = build_rows(trainable, args.row_layout, simulator_rows=self.trains_simulator, families=families)
        real = len(rows)
        chunks = args.steps_per_generation if mode == "train" else 1
        pad_id = int(self.processing_class.pad_token_id)
        n_pad = (-real) % chunks if real else chunks
        rows_ids = [r.prompt_ids[-args.max_prompt_tokens:] for r in rows] + [[pad_id]] * n_pad
        comp_ids = [r.completion_ids or [pad_id] for r in rows] + [[pad_id]] * n_pad
        width_p = max(len(p) for p in rows_ids)
        width_c = max(len(c) for c in comp_ids)
        prompt_ids, prompt_mask = pad_left(rows_ids, pad_id, width_p)
        completion_ids = pad_right(comp_ids, pad_id, width_c, torch.long)
        keep = [self._keep_row(r) for r in rows] + [0] * n_pad
        completion_mask = pad_right([[k] * len(c) for k, c in zip(keep, comp_ids)], 0, width_c, torch.long)
        env_mask = pad_right([r.env_mask for r in rows] + [[0]] * n_pad, 0, width_c, torch.long)
        sampling_logps = pad_right([r.logprobs for r in rows] + [[0.0]] * n_pad, 0.0, width_c, torch.float32)
        prompt_ids, prompt_mask = prompt_ids.to(device), prompt_mask.to(device)
        completion_ids, completion_mask = completion_ids.to(device), completion_mask.to(device)
        env_mask, sampling_logps = env_mask.to(device), sampling_logps.to(device)
        loss_mask = completion_mask * env_mask

        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)
        logits_to_keep = completion_ids.size(1)
        batch_size = args.per_device_train_batch_size if mode == "train" else args.per_device_eval_batch_size
        generate_every = args.steps_per_generation * self.num_iterations
        need_old = args.gradient_accumulation_steps % generate_every != 0 or self.credit.needs_old_logprobs
        old_logps = ref_logps = teacher_logps = None
        evidence: dict[str, torch.Tensor | None] = {}
        with torch.no_grad():
            if need_old:
                old_logps = self._logps(self.model, input_ids, attention_mask, logits_to_keep, batch_size)
            if self.beta != 0.0:
                ref_logps = self._ref_logps(input_ids, attention_mask, logits_to_keep, batch_size)
            if self.credit.needs_teacher_logprobs:
                teacher_logps = self._teacher_logps(rows, comp_ids, n_pad, pad_id, width_c, batch_size)
            if self.credit.needs_full_logits:
                evidence = self._evidence_logits(rows, n_pad, pad_id, (prompt_ids, prompt_mask), completion_ids,
                                                 batch_size)

        credit_batch = self._credit_batch_for(rows, n_pad, loss_mask, old_logps, teacher_logps, **evidence)
        out = self.credit.advantages(credit_batch)
        advantages = torch.where(loss_mask.bool(), out.advantages.to(device), torch.zeros_like(out.advantages).to(device))
        self._credit_batch = credit_batch

        for key, value in {**episode_metrics(episodes, rows), **out.metrics}.items():
            self._metrics[mode][key].append(float(value))
        self._metrics[mode]["reward"].append(float(torch.tensor([e.episode_return for e in episodes]).mean()) if episodes else 0.0)
        if mode == "train" and args.save_trajectories:
            self._trajectory_log().write_step(self.state.global_step + 1, episodes)

        output: dict[str, Any] = {
            "prompt_ids": prompt_ids,
            "prompt_mask": prompt_mask,
            "completion_ids": completion_ids,
            "completion_mask": completion_mask,
            "advantages": advantages,
            "num_items_in_batch": self.accelerator.gather(loss_mask.sum()).sum(),
            "row_index": torch.arange(real + n_pad, device=device),
        }
        if args.row_layout == "trajectory":
            output["tool_mask"] = env_mask
        if old_logps is not None:
            output["old_per_token_logps"] = old_logps
        if ref_logps is not None:
            output["ref_per_token_logps"] = ref_logps
        if self.use_vllm:
            output["sampling_per_token_logps"] = sampling_logps
        return output

    def _keep_row(self, row: Row) -> int:
        """0 masks a row with no completion tokens (its one pad token is not an action) and a row
        whose generation was cut by the token budget (mask_truncated_completions)."""
        if not row.completion_ids:
            return 0
        if self.mask_truncated_completions and row.turns and row.turns[-1].finish_reason == "length":
            return 0
        return 1

    def _logps(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: int, bs: int) -> torch.Tensor:
        """Per-token log-probs of the last ``keep`` tokens (no gradient), in micro-batches of rows of
        similar length, each cut to its own width (see :mod:`~agentgym_suite.trainers.batching`)."""
        parts, order = [], []
        for index, start in length_sorted_chunks(attention_mask, keep, bs):
            index = index.to(input_ids.device)
            logps, _, _ = super()._get_per_token_logps_and_entropies(
                model, input_ids[index, start:], attention_mask[index, start:], keep, batch_size=index.numel())
            parts.append(logps)
            order.append(index)
        stacked = torch.cat(parts)
        result = torch.empty_like(stacked)
        result[torch.cat(order)] = stacked
        return result

    def _ref_logps(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: int, bs: int) -> torch.Tensor:
        if self.ref_model is not None:
            return self._logps(self.ref_model, input_ids, attention_mask, keep, bs)
        from trl.models.utils import use_adapter

        model = self.accelerator.unwrap_model(self.model)
        with use_adapter(model, adapter_name="ref" if "ref" in model.peft_config else None):
            return self._logps(self.model, input_ids, attention_mask, keep, bs)

    def _teacher_prompts(self, rows: list[Row], n_pad: int, pad_id: int) -> list[list[int]]:
        """Privileged prefix + each row's prompt (history dropped first when too long), padding rows last."""
        args: AgentGRPOConfig = self.args
        encode = self.processing_class.encode
        prompts = []
        for r in rows:
            prefix = encode(privileged_prefix(self._privileged_text(r)), add_special_tokens=False)
            prompts.append(teacher_prompt_ids(prefix, r.prompt_ids, args.max_prompt_tokens + len(prefix)))
        return prompts + [[pad_id]] * n_pad

    def _teacher_logps(self, rows: list[Row], comp_ids: list[list[int]], n_pad: int, pad_id: int, width_c: int,
                       bs: int) -> torch.Tensor:
        """Log-probs of the same completions under the same weights with the privileged prefix."""
        prompts = self._teacher_prompts(rows, n_pad, pad_id)
        device = self.accelerator.device
        width_p = max(len(p) for p in prompts)
        t_ids, t_mask = pad_left(prompts, pad_id, width_p)
        c_ids = pad_right(comp_ids, pad_id, width_c, torch.long)
        c_mask = pad_right([[1] * len(c) for c in comp_ids], 0, width_c, torch.long)
        ids = torch.cat([t_ids, c_ids], dim=1).to(device)
        mask = torch.cat([t_mask, c_mask], dim=1).to(device)
        return self._logps(self.model, ids, mask, width_c, bs)

    def _evidence_logits(self, rows: list[Row], n_pad: int, pad_id: int, plain: tuple[torch.Tensor, torch.Tensor],
                         completion_ids: torch.Tensor, bs: int) -> dict[str, torch.Tensor | None]:
        """VAD teacher logits: same pre-update weights, evidence present (privileged prefix) and
        removed (the student's own prompt), reduced to the plug-in's top-k under the former."""
        prompts = self._teacher_prompts(rows, n_pad, pad_id)
        device = self.accelerator.device
        ids, mask = pad_left(prompts, pad_id, max(len(p) for p in prompts))
        top_k = getattr(self.credit.config, "top_k", None)
        with self.accelerator.autocast():
            pos, neg, index = teacher_logits(self.model, (ids.to(device), mask.to(device)), plain, completion_ids,
                                             top_k=top_k, batch_size=bs)
        return {"teacher_logits": pos, "teacher_logits_no_evidence": neg, "vocab_index": index}

    def _student_logits(self, model: Any, inputs: dict[str, Any], index: torch.Tensor | None) -> torch.Tensor:
        """Current logits (with gradient) over the micro-batch's completion tokens, gathered at ``index``."""
        ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        mask = torch.cat([inputs["prompt_mask"], torch.ones_like(inputs["completion_ids"])], dim=1)
        with self.accelerator.autocast():
            logits = completion_logits(model, ids, mask, inputs["completion_ids"].size(1))
        return logits if index is None else logits.gather(-1, index.to(logits.device))

    def _privileged_text(self, row: Row) -> str:
        args: AgentGRPOConfig = self.args
        first = row.turns[0]
        if args.teacher_context == "oracle":
            return oracle_text(first.oracle)
        if args.teacher_context == "env_response":
            return env_response_text(first.observation)
        return skill_text(row.family, args.skills_dir)

    def _credit_batch_for(self, rows: list[Row], n_pad: int, mask: torch.Tensor, old: torch.Tensor | None,
                          teacher: torch.Tensor | None, **logits: torch.Tensor | None) -> CreditBatch:
        role = self.credit.primary_role
        pad_keys = [f"pad:{i}" for i in range(n_pad)]
        roles = [r.role if r.role != "agent" else role for r in rows] + [role] * n_pad
        return CreditBatch(
            group_ids=[r.group for r in rows] + pad_keys,
            traj_ids=[r.traj for r in rows] + pad_keys,
            turn_idx=[r.turn_idx for r in rows] + [0] * n_pad,
            roles=roles,
            returns=torch.tensor([r.ret for r in rows] + [0.0] * n_pad, dtype=torch.float32, device=mask.device),
            invalid=torch.tensor([r.invalid for r in rows] + [False] * n_pad, dtype=torch.bool, device=mask.device),
            completion_mask=mask.detach(),
            old_logprobs=None if old is None else old.detach().float(),
            teacher_logprobs=None if teacher is None else teacher.detach().float(),
            step_rewards=torch.tensor([r.step_reward for r in rows] + [0.0] * n_pad, dtype=torch.float32,
                                      device=mask.device),
            anchor_keys=[r.anchor for r in rows] + pad_keys,
            task_ids=[r.episode.task_id for r in rows] + pad_keys,
            positions=[r.position for r in rows] + [0] * n_pad,
            step=int(self.state.global_step),
            **logits,
        )

    def _trajectory_log(self) -> TrajectoryLog:
        if self._traj_log is None:
            self._traj_log = TrajectoryLog(os.path.join(self.args.output_dir, "trajectories"),
                                           rank=self.accelerator.process_index)
        return self._traj_log

    # ------------------------------------------------------------------ loss
    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                                           logits_to_keep: int, *args: Any, **kwargs: Any):  # type: ignore[override]
        if not args and all(v is None for k, v in kwargs.items() if k not in _TEXT_ONLY_KWARGS):
            # text-only batch: the columns that are padding in every row cost compute and change nothing
            input_ids, attention_mask = trim_left_padding(input_ids, attention_mask, logits_to_keep)
        result = super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args,
                                                            **kwargs)
        if self._capture:
            self._captured_logps = result[0]
        return result

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        if not self.credit.has_aux_loss or self._credit_batch is None:
            return super()._compute_loss(model, inputs)
        self._capture = True
        try:
            loss = super()._compute_loss(model, inputs)
        finally:
            self._capture = False
        logps = self._captured_logps
        self._captured_logps = None
        sub = self._credit_batch.select(inputs["row_index"])
        student = None
        if self.credit.needs_full_logits:  # the logits are gathered here, so the plug-in sees one vocabulary
            student = self._student_logits(model, inputs, sub.vocab_index).float()
            sub = replace(sub, vocab_index=None)
        aux = self.credit.aux_loss(sub, logps.float(), student)
        if aux is None:
            return loss
        mode = "train" if self.model.training else "eval"
        normalizer = self.current_gradient_accumulation_steps if mode == "train" else 1.0
        for key, value in aux.metrics.items():
            self._metrics[mode][key].append(float(value))
        self._metrics[mode][f"credit/{self.credit.name}/aux_loss"].append(float(aux.loss.detach()))
        return loss + aux.loss.to(loss.device) / normalizer


_TEXT_ONLY_KWARGS = ("batch_size", "compute_entropy", "compute_aux_loss")
"""Keyword arguments of TRL's log-prob pass that do not tie the batch to its full width."""


def build_credit(args: AgentGRPOConfig) -> CreditAssigner:
    """The plug-in named by ``args.credit`` with ``args.credit_params``, completed from the plug-in's
    declarations: its ``trainer_defaults``, and the trainer's ``invalid_action_penalty`` when the
    plug-in has an ``invalid_penalty`` parameter but not ``own_invalid_penalty``. What the params
    set always wins."""
    from dataclasses import fields

    from agentgym_suite.trainers.credit import credit_assigner_class

    cls = credit_assigner_class(args.credit)
    params = {**cls.trainer_defaults, **(args.credit_params or {})}
    names = {f.name for f in fields(cls.config_cls)}
    if "invalid_penalty" in names and "invalid_penalty" not in params and not cls.own_invalid_penalty:
        params["invalid_penalty"] = args.invalid_action_penalty
    return cls(**params)

"""TRL's per-micro-batch training step, as :class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer` runs it.

A mixin of the trainer (one of its bases), kept in a file of its own so ``agent_grpo.py`` reads as
the four phases of a generation batch. After those phases TRL buffers the generation batch and,
per micro-batch, calls the methods here:

- :meth:`MicroBatchLoss._prepare_inputs`: TRL's, plus, with ``rows_per_update``, verl's update plan
  over a new generation batch and the opening of an update's end before the micro-batch's backward
  pass (:mod:`~agentgym_suite.trainers.verl_updates`);
- :meth:`MicroBatchLoss.training_step`: TRL's, plus the optimizer update that closes such an end;
- :meth:`MicroBatchLoss.compute_loss`: TRL's loss in passes of at most ``max_rows_per_pass`` rows
  (:mod:`~agentgym_suite.trainers.memory_bound`);
- :meth:`MicroBatchLoss._compute_loss`: one pass's loss, TRL's policy loss scaled so padding rows
  change nothing, the verl KL and entropy terms the trainer takes over from TRL
  (:meth:`MicroBatchLoss._take_over_loss_terms`, :meth:`MicroBatchLoss._own_loss_terms`) and the
  plug-in's auxiliary loss (:meth:`MicroBatchLoss._aux_loss`), both on the per-token log-probs TRL
  computed, captured by :meth:`MicroBatchLoss._get_per_token_logps_and_entropies`.

The trainer lists this class first among its bases, so these overrides wrap the step timer's
(:class:`~agentgym_suite.trainers.step_profile.StepTimer`) and TRL's.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar

import torch

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.trainers import cpu_speed, verl_updates
from agentgym_suite.trainers.batching import trim_left_padding
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.credit import VOCAB_INDEX
from agentgym_suite.trainers.memory_bound import loss_over_passes, pass_token_share, policy_loss_scale, row_passes

logger = logging.getLogger("agentgym_suite.trainers.agent_grpo")  # the trainer's logger, as before the move

_TEXT_ONLY_KWARGS = ("batch_size", "compute_entropy", "compute_aux_loss")
"""Keyword arguments of TRL's log-prob pass that do not tie the batch to its full width."""


class MicroBatchLoss:
    """Mixin of ``AgentGRPOTrainer``: TRL's per-micro-batch step and loss (see the module docstring)."""

    conformance: ClassVar[MethodConformance | None] = verl_updates.CONFORMANCE
    """What ``tests/conformance/`` checks of this part against upstream (``agentgym conformance`` reports it)."""

    def _take_over_loss_terms(self, args: AgentGRPOConfig) -> None:
        """With ``kl_estimator: low_var_kl`` the KL term, and with ``rows_per_update`` TRL's static
        entropy bonus, are computed here (:meth:`_own_loss_terms`) rather than inside TRL's loss:
        verl clamps the KL, and both must be token means over each update, not each micro-batch
        (:mod:`~agentgym_suite.trainers.verl_updates`)."""
        self._kl_coef = 0.0
        self._entropy_coef = 0.0
        self._update_steps = verl_updates.UpdateSteps(self)
        if args.kl_estimator == "low_var_kl" and self.beta != 0.0:
            self._kl_coef, self.beta = float(self.beta), 0.0  # TRL built the reference model already
        if args.rows_per_update is not None:
            plugin = getattr(self.accelerator.state, "fsdp_plugin", None) if self.is_fsdp_enabled else None
            verl_updates.check_update_setup(fp16_scaler=self.accelerator.scaler is not None,
                                            fsdp_version=getattr(plugin, "fsdp_version", None))
            for line in verl_updates.schedule_departures(args.pad_rows_per_process):
                logger.warning("rows_per_update departs from verl-agent's schedule: %s", line)
            if self.entropy_coef and not self.use_adaptive_entropy:
                self._entropy_coef, self.entropy_coef = float(self.entropy_coef), 0.0
                self._entropy_bonus_enabled = False

    @property
    def _own_terms(self) -> bool:
        return bool(self._kl_coef or self._entropy_coef)

    def _prepare_inputs(self, generation_batch: Any) -> Any:  # type: ignore[override]
        """TRL's: a new generation batch every ``steps_per_generation`` micro-batches (the phases
        above), then the next micro-batch of it; with ``rows_per_update``, a new generation batch's
        micro-batches are cut into verl's optimizer updates (:mod:`~agentgym_suite.trainers.verl_updates`)."""
        buffered = self._buffered_inputs
        inputs = super()._prepare_inputs(generation_batch)
        args: AgentGRPOConfig = self.args
        if self.model.training and args.rows_per_update is not None and self._buffered_inputs is not buffered:
            updates = verl_updates.plan_updates(self._buffered_inputs, self._generation_rows,
                                                args.rows_per_update, self.sync, args.pad_rows_per_process)
            self._metrics["train"]["updates_per_generation"].append(float(updates))
        return inputs

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:  # type: ignore[override]
        """TRL's step; with ``rows_per_update``, the step of an update that ends with this micro-batch's
        last pass (not the generation batch's last update: the trainer takes that one as usual)."""
        loss = super().training_step(model, inputs, num_items_in_batch)  # compute_loss opens an update's end
        for norm in self._update_steps.finish():
            self._metrics["train"]["update_grad_norm"].append(norm)
        return loss

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> torch.Tensor:
        """TRL's loss, in passes of at most ``max_rows_per_pass`` rows: every pass but the last is
        back-propagated here, the last by the trainer; the returned value is the whole loss. With
        ``rows_per_update`` the passes also stop at every update's end, its optimizer step after them."""
        def compute(part: dict[str, Any]) -> Any:
            with self._pass_checkpointing.context(self.accelerator.unwrap_model(model), part):
                return super(MicroBatchLoss, self).compute_loss(model, part, return_outputs, num_items_in_batch)

        if self.model.training and verl_updates.PLAN in inputs:
            return self._update_steps.loss(inputs, self.args.max_rows_per_pass, compute, model)
        passes = row_passes(inputs, self.args.max_rows_per_pass)
        if len(passes) > 1 and not (self.credit.has_aux_loss or self._own_terms):  # each pass's own width
            passes = [cpu_speed.trim_completion_padding(part) for part in passes]
        return loss_over_passes(passes, compute, self.accelerator, model)

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        """One pass's loss: TRL's policy loss (scaled so padding rows change nothing), the verl terms
        taken over from TRL (:meth:`_own_loss_terms`), and the plug-in's auxiliary loss
        (:meth:`_aux_loss`) on the log-probs TRL computed, captured rather than recomputed."""
        mode = "train" if self.model.training else "eval"
        scale = policy_loss_scale(self.loss_type, inputs, processes=self.sync.world_size,
                                  steps_per_generation=self.args.steps_per_generation if mode == "train" else 1)
        update = float(inputs[verl_updates.UPDATE_SCALE]) if verl_updates.UPDATE_SCALE in inputs else 1.0
        aux_needed = self.credit.has_aux_loss and self._credit_batch is not None
        if not aux_needed and not self._own_terms:
            return super()._compute_loss(model, inputs) * scale * update
        self._capture = True
        try:
            loss = super()._compute_loss(model, inputs) * scale
        finally:
            self._capture = False
        logps, self._captured_logps = self._captured_logps, None
        entropies, self._captured_entropies = self._captured_entropies, None
        if self._own_terms:
            loss = loss + self._own_loss_terms(inputs, logps, entropies, mode)
        loss = loss * update
        if not aux_needed:
            return loss
        share = float(inputs[verl_updates.UPDATE_SHARE]) if verl_updates.UPDATE_SHARE in inputs else 1.0
        return loss + self._aux_loss(model, inputs, logps, mode).to(loss.device) * share

    def _get_per_token_logps_and_entropies(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                                           logits_to_keep: int, *args: Any, **kwargs: Any):  # type: ignore[override]
        """TRL's log-prob pass, on text-only batches cut to their non-padding columns; inside
        :meth:`_compute_loss` its result is captured for the auxiliary loss and the verl terms."""
        if not args and all(v is None for k, v in kwargs.items() if k not in _TEXT_ONLY_KWARGS):
            # text-only batch: the columns that are padding in every row cost compute and change nothing
            input_ids, attention_mask = trim_left_padding(input_ids, attention_mask, logits_to_keep)
        result = super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args,
                                                            **kwargs)
        if self._capture:
            self._captured_logps, self._captured_entropies = result[0], result[1]
        return result

    def _own_loss_terms(self, inputs: dict[str, Any], logps: torch.Tensor, entropies: torch.Tensor | None,
                        mode: str) -> torch.Tensor:
        """``kl_coef * low_var_kl - entropy_coef * entropy``, summed over the pass's trained tokens and
        divided by TRL's token-sum normaliser (so the terms are token means, as the policy loss)."""
        mask = inputs["completion_mask"]
        if "tool_mask" in inputs:
            mask = mask * inputs["tool_mask"]
        mask = mask.to(logps.dtype)
        normalizer = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        if mode == "train":
            normalizer = normalizer * self.current_gradient_accumulation_steps / self.args.steps_per_generation
        total = logps.sum() * 0.0
        if self._kl_coef:
            kl = verl_updates.low_var_kl(logps, inputs["ref_per_token_logps"])
            total = total + self._kl_coef * (kl * mask).sum() / normalizer
            self._metrics[mode]["kl"].append(float(((kl * mask).sum() / mask.sum().clamp(min=1.0)).detach()))
        if self._entropy_coef and entropies is not None:
            total = total - self._entropy_coef * (entropies * mask).sum() / normalizer
        return total

    def _aux_loss(self, model: Any, inputs: dict[str, Any], logps: torch.Tensor, mode: str) -> torch.Tensor:
        """The plug-in's auxiliary loss on the pass's real rows, weighted by the pass's share of its
        micro-batch's tokens. A pass of padding rows only still runs the same forward passes."""
        index = inputs["row_index"]
        real = (index >= 0).nonzero(as_tuple=True)[0]
        if real.numel() == 0:
            if not self.credit.needs_full_logits:
                return logps.sum() * 0.0
            first = {k: inputs[k][:1] for k in ("prompt_ids", "prompt_mask", "completion_ids")}
            return self._student_logits(model, first, None).sum() * 0.0
        sub = self._credit_batch.select(index[real])
        student = None
        if self.credit.needs_full_logits:  # the logits are gathered here, so the plug-in sees one vocabulary
            rows = {k: inputs[k][real] for k in ("prompt_ids", "prompt_mask", "completion_ids")}
            student = self._student_logits(model, rows, sub.aux_extras.get(VOCAB_INDEX)).float()
            sub = replace(sub, aux_extras={k: v for k, v in sub.aux_extras.items() if k != VOCAB_INDEX})
        aux = self.credit.aux_loss(sub, logps[real].float(), student)
        if aux is None:
            return logps.sum() * 0.0
        normalizer = self.current_gradient_accumulation_steps if mode == "train" else 1.0
        for key, value in aux.metrics.items():
            self._metrics[mode][key].append(float(value))
        self._metrics[mode][f"credit/{self.credit.name}/aux_loss"].append(float(aux.loss.detach()))
        return aux.loss * pass_token_share(inputs) / normalizer

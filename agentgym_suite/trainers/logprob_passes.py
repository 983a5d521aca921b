"""The log-prob and logit passes of :class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer`.

A mixin of the trainer (one of its bases), kept in a file of its own so ``agent_grpo.py`` reads as
the four phases. The score phase runs the no-gradient passes a credit plug-in declares it reads:
the policy's old log-probs (:meth:`LogprobPasses._logps`), the teacher's log-probs with privileged
text (:meth:`LogprobPasses._teacher_logps`, prompts from :meth:`LogprobPasses._teacher_prompts`
and :meth:`LogprobPasses._privileged_text`, both asked of the teacher context the plug-in declares,
``CreditAssigner.teacher_context``) and the teacher logits after the prompts the plug-in's
``teacher_logit_prompts`` gives (:meth:`LogprobPasses._teacher_logits`), on the weights :meth:`LogprobPasses._teacher_weights`
gives; the loss phase adds the reference model's log-probs (:meth:`LogprobPasses._ref_logps`), and
the auxiliary loss of a plug-in that distils whole distributions reads the student's logits
(:meth:`LogprobPasses._student_logits`).

The methods read the trainer's state (``args``, ``accelerator``, ``processing_class``, ``credit``,
``fixed_teacher``, ``teacher_context``, ``ref_model``) and call TRL's
``_get_per_token_logps_and_entropies`` through ``super()``: the trainer lists this class after the
one that wraps that method (:class:`~agentgym_suite.trainers.micro_batch_loss.MicroBatchLoss`), so
these passes run TRL's own, uncaptured.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import torch

from agentgym_suite.trainers.batching import length_sorted_chunks
from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.credit import VOCAB_INDEX
from agentgym_suite.trainers.logits import completion_logits, teacher_logits
from agentgym_suite.trainers.rows import Row, pad_left, pad_right


class LogprobPasses:
    """Mixin of ``AgentGRPOTrainer``: the log-prob and logit passes (see the module docstring)."""

    args: Any
    accelerator: Any
    processing_class: Any
    credit: Any
    fixed_teacher: Any
    teacher_context: Any
    ref_model: Any
    model: Any

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

    def _teacher_prompts(self, rows: list[Row], n_pad: int, pad_id: int) -> list[list[int]]:
        """The teacher prompt of each row (its privileged text and prompt, as the plug-in's teacher context
        builds it), padding rows last."""
        args: AgentGRPOConfig = self.args
        encode = lambda text: self.processing_class.encode(text, add_special_tokens=False)  # noqa: E731
        prompts = [self.teacher_context.prompt_ids(self._privileged_text(r), r.prompt_ids, encode, args.max_prompt_tokens)
                   for r in rows]
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
        with self._teacher_weights() as teacher:
            return self._logps(teacher, ids, mask, width_c, bs)

    def _teacher_weights(self) -> Any:
        """Context giving the model teacher passes run on: the fixed teacher when the plug-in
        declares ``needs_fixed_teacher``, else the policy itself."""
        if self.fixed_teacher is None:
            return nullcontext(self.model)
        return self.fixed_teacher.weights(self.model)

    def _teacher_logits(self, rows: list[Row], n_pad: int, pad_id: int, completion_ids: torch.Tensor,
                        bs: int) -> dict[str, torch.Tensor]:
        """The teacher's logits over the completions after each set of prompts the plug-in asks for
        (``teacher_logit_prompts``, given each row's privileged text), by the set's name, reduced to
        the plug-in's top-k after the first set (their ids under ``VOCAB_INDEX``): the ``aux_extras``
        of the credit batch."""
        args: AgentGRPOConfig = self.args
        encode = lambda text: self.processing_class.encode(text, add_special_tokens=False)  # noqa: E731
        wanted = self.credit.teacher_logit_prompts(rows, [self._privileged_text(r) for r in rows], encode,
                                                   args.max_prompt_tokens)
        device = self.accelerator.device
        sets = {name: [list(p) for p in prompts] + [[pad_id]] * n_pad for name, prompts in wanted.prompts.items()}
        width = max(len(p) for prompts in sets.values() for p in prompts)
        padded = [pad_left(prompts, pad_id, width) for prompts in sets.values()]
        with self.accelerator.autocast(), self._teacher_weights() as teacher:
            logits, index = teacher_logits(teacher, [(ids.to(device), mask.to(device)) for ids, mask in padded],
                                           completion_ids, top_k=wanted.top_k, batch_size=bs)
        out = dict(zip(sets, logits))
        if index is not None:
            out[VOCAB_INDEX] = index
        return out

    def _privileged_text(self, row: Row) -> str:
        """The teacher's privileged text for ``row``, from the plug-in's teacher context."""
        if self.teacher_context is None:
            raise RuntimeError("the plug-in runs no teacher pass, so the trainer built no teacher context.")
        return self.teacher_context.text(row, lambda ids: self.processing_class.decode(ids, skip_special_tokens=False))

    def _ref_logps(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: int, bs: int) -> torch.Tensor:
        """Reference-model log-probs: TRL's reference model, or the policy with its adapter off (PEFT)."""
        if self.ref_model is not None:
            return self._logps(self.ref_model, input_ids, attention_mask, keep, bs)
        from trl.trainer.utils import use_adapter

        model = self.accelerator.unwrap_model(self.model)
        with use_adapter(model, adapter_name="ref" if "ref" in model.peft_config else None):
            return self._logps(self.model, input_ids, attention_mask, keep, bs)

    def _student_logits(self, model: Any, inputs: dict[str, Any], index: torch.Tensor | None) -> torch.Tensor:
        """Current logits (with gradient) over the micro-batch's completion tokens, gathered at ``index``."""
        ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        mask = torch.cat([inputs["prompt_mask"], torch.ones_like(inputs["completion_ids"])], dim=1)
        with self.accelerator.autocast():
            logits = completion_logits(model, ids, mask, inputs["completion_ids"].size(1))
        return logits if index is None else logits.gather(-1, index.to(logits.device))

"""Rows as the tensors a generation batch needs, for :class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer`.

A mixin of the trainer (one of its bases) and the score phase's result, kept in a file of their own
so ``agent_grpo.py`` reads as the four phases. The score phase pads this process's rows to the
same count on every process (:meth:`RowBatches._padded_rows`, masking rows that are no action,
:meth:`RowBatches._keep_row`) and builds the plug-in's :class:`~agentgym_suite.trainers.credit.CreditBatch`
(:meth:`RowBatches._credit_batch_for`); its result is a :class:`ScoredBatch`. The loss phase keeps
the rows that teach something (:meth:`RowBatches._trained_rows`, :meth:`RowBatches._rows_to_train`;
``skip_uninformative_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from agentgym_suite.trainers.config import AgentGRPOConfig
from agentgym_suite.trainers.credit import CreditBatch, compute_row_inputs
from agentgym_suite.trainers.memory_bound import LOCAL_TOKEN_LOSSES, padding_rows
from agentgym_suite.trainers.rows import Row, pad_left, pad_right


@dataclass
class ScoredBatch:
    """This process's share of a generation batch after the score phase (every row, padded)."""

    rows: list[Row]
    """The rows of the trainable episodes (``row_layout``), in order."""
    batch: dict[str, Any]
    """The rows as padded tensors (:meth:`AgentGRPOTrainer._padded_rows`), then ``n_pad`` padding rows."""
    n_pad: int
    """All-masked padding rows after the real ones: the same row count on every process."""
    credit_batch: CreditBatch
    """What the plug-in scored (its auxiliary loss reads it again per micro-batch)."""
    advantages: torch.Tensor
    """``(rows + n_pad, T)`` per-token advantages, 0 off the loss mask and on padding rows."""
    old_logps: torch.Tensor | None
    """Old-policy log-probs when the plug-in read them (reused by the loss)."""
    credit_metrics: dict[str, float]
    """The plug-in's metrics over every process's rows."""
    total_rows: int
    """Real rows over every process."""
    num_items: torch.Tensor
    """Trained tokens over every process and every row (rows left out of the passes still count)."""


class RowBatches:
    """Mixin of ``AgentGRPOTrainer``: padded rows, the credit batch and the rows to train (module docstring)."""

    def _padded_rows(self, rows: list[Row], n_pad: int, pad_id: int) -> dict[str, Any]:
        """The rows as left-padded prompts and right-padded completions on the device, followed by
        ``n_pad`` all-masked padding rows; ``comp_ids`` keeps the completions as lists."""
        args: AgentGRPOConfig = self.args
        device = self.accelerator.device
        rows_ids = [r.prompt_ids[-args.max_prompt_tokens:] for r in rows] + [[pad_id]] * n_pad
        comp_ids = [r.completion_ids or [pad_id] for r in rows] + [[pad_id]] * n_pad
        width_p = max(len(p) for p in rows_ids)
        width_c = max(len(c) for c in comp_ids)
        prompt_ids, prompt_mask = pad_left(rows_ids, pad_id, width_p)
        keep = [self._keep_row(r) for r in rows] + [0] * n_pad
        out = {
            "comp_ids": comp_ids,
            "prompt_ids": prompt_ids.to(device),
            "prompt_mask": prompt_mask.to(device),
            "completion_ids": pad_right(comp_ids, pad_id, width_c, torch.long).to(device),
            "completion_mask": pad_right([[k] * len(c) for k, c in zip(keep, comp_ids)], 0, width_c,
                                         torch.long).to(device),
            "env_mask": pad_right([r.env_mask for r in rows] + [[0]] * n_pad, 0, width_c, torch.long).to(device),
            "sampling_logps": pad_right([r.logprobs for r in rows] + [[0.0]] * n_pad, 0.0, width_c,
                                        torch.float32).to(device),
        }
        out["loss_mask"] = out["completion_mask"] * out["env_mask"]
        out["input_ids"] = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
        out["attention_mask"] = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
        return out

    def _keep_row(self, row: Row) -> int:
        """0 masks a row with no completion tokens (its one pad token is not an action) and a row
        whose generation was cut by the token budget (mask_truncated_completions)."""
        if not row.completion_ids:
            return 0
        if self.mask_truncated_completions and row.turns and row.turns[-1].finish_reason == "length":
            return 0
        return 1

    def _credit_batch_for(self, rows: list[Row], mask: torch.Tensor, old: torch.Tensor | None,
                          teacher: torch.Tensor | None, aux: dict[str, torch.Tensor]) -> CreditBatch:
        """The credit batch of the real rows (the first ``len(rows)`` of the padded tensors): the fields
        every plug-in reads, then the plug-in's own inputs (its ``row_inputs`` providers run on the rows)
        and ``aux`` (the teacher logits its ``teacher_logit_prompts`` asked for)."""
        role = self.credit.primary_role
        n = len(rows)
        return CreditBatch(
            group_ids=[r.group for r in rows],
            traj_ids=[r.traj for r in rows],
            turn_idx=[r.turn_idx for r in rows],
            roles=[r.role if r.role != "agent" else role for r in rows],
            returns=torch.tensor([r.ret for r in rows], dtype=torch.float32, device=mask.device),
            invalid=torch.tensor([r.invalid for r in rows], dtype=torch.bool, device=mask.device),
            completion_mask=mask[:n].detach(),
            old_logprobs=None if old is None else old[:n].detach().float(),
            teacher_logprobs=None if teacher is None else teacher[:n].detach().float(),
            step=int(self.state.global_step),
            extras=compute_row_inputs(self.credit.row_inputs, rows, mask.device),  # the plug-in's own inputs
            aux_extras={k: v[:n].detach() for k, v in aux.items()},
        )

    def _trained_rows(self, scored: ScoredBatch, mode: str
                      ) -> tuple[torch.Tensor, dict[str, Any], int, torch.Tensor, torch.Tensor | None]:
        """The rows that go through the passes (all, or with ``skip_uninformative_rows`` those
        :meth:`_rows_to_train` keeps, padded again to the same count on every process): their index
        in the credit batch, padded tensors, padding rows, advantages and old log-probs."""
        rows, batch, n_pad = scored.rows, scored.batch, scored.n_pad
        advantages, old_logps = scored.advantages, scored.old_logps
        real = len(rows)
        if not self.args.skip_uninformative_rows:
            return torch.arange(real), batch, n_pad, advantages, old_logps
        trained = self._rows_to_train(scored.credit_batch, advantages[:real], batch["loss_mask"][:real])
        counts = self.sync.gather((real, len(trained)))  # every process calls it: the new padding is global
        self._metrics[mode]["rows/skipped_zero_advantage"].append(float(sum(r - t for r, t in counts)))
        index = torch.tensor(trained, dtype=torch.long)
        n_pad = padding_rows(len(trained), max(t for _, t in counts), self._micro_batches(mode))
        batch = self._padded_rows([rows[i] for i in trained], n_pad, int(self.processing_class.pad_token_id))
        width = batch["completion_ids"].size(1)
        old_logps = None if old_logps is None else _rows_of(old_logps, index, n_pad, width)
        return index, batch, n_pad, _rows_of(advantages, index, n_pad, width), old_logps

    def _rows_to_train(self, batch: CreditBatch, advantages: torch.Tensor, loss_mask: torch.Tensor) -> list[int]:
        """Indices of the rows that go through the forward and backward passes: all of them, unless
        ``skip_uninformative_rows``; then those with a non-zero advantage on a trained token, or a
        loss term besides the policy term (KL, entropy bonus, the plug-in's ``rows_with_other_terms``)."""
        rows = int(loss_mask.shape[0])
        # rows_per_update plans verl's update boundaries over every row of the generation batch
        every_row = (not self.args.skip_uninformative_rows or self.beta != 0.0 or self._entropy_bonus_enabled
                     or self._own_terms or self.args.rows_per_update is not None
                     or self.aux_loss_enabled or self.loss_type in LOCAL_TOKEN_LOSSES)
        if every_row:
            return list(range(rows))
        teaching = ((advantages != 0) & loss_mask.bool()).any(dim=1)
        other = self.credit.rows_with_other_terms(batch).to(teaching.device)
        return (teaching | other).nonzero(as_tuple=True)[0].tolist()


def _rows_of(values: torch.Tensor, index: torch.Tensor, n_pad: int, width: int) -> torch.Tensor:
    """The rows ``index`` of ``values`` cut to ``width`` columns, then ``n_pad`` rows of zeros."""
    picked = values[index.to(values.device), :width]
    return torch.cat([picked, torch.zeros(n_pad, width, dtype=values.dtype, device=values.device)])

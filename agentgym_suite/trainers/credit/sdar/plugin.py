"""SDAR: gated self-distillation as an auxiliary loss on top of GRPO, and OPSD, the same
gated loss trained alone (policy-gradient coefficient 0).

``beta = 0`` gives GRPO+OPSD (constant gate 0.5): ``get_credit_assigner("sdar", beta=0)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import torch
from torch import Tensor

from agentgym_suite.trainers.credit.base import (
    AuxLossOutput,
    check_logprobs,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    finite,
    masked_mean,
    require,
    TeacherContext,
    TeacherSettings,
    where_mask,
)
from agentgym_suite.trainers.credit.grouping import broadcast
from agentgym_suite.trainers.credit.grpo import GRPOCredit, GRPOCreditConfig, grpo_row_advantages
from agentgym_suite.trainers.credit.self_distillation import PrivilegedTextTeacher


@dataclass
class SDARCreditConfig(GRPOCreditConfig):
    """Parameters of SDAR (defaults of the released training scripts)."""

    lambda_: float = field(
        default=0.01,
        metadata={"help": "Weight of L_SDAR in L = L_GRPO + lambda*L_SDAR: 0.01 (scripts); the code's default is 0.1."},
    )
    beta: float = field(default=5.0, metadata={"help": "Gate sharpness: g = sigmoid(beta * gap); 0 = GRPO+OPSD."})
    pg_coef: float = field(
        default=1.0, metadata={"help": "Scale of the GRPO advantages (1 for SDAR, 0 for OPSD)."}
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        super().__post_init__()
        require(finite(self.lambda_) and self.lambda_ >= 0,
                f"lambda_ must be >= 0 (got {self.lambda_!r}); the scripts use 0.01, the code 0.1.")
        require(finite(self.beta) and self.beta >= 0,
                f"beta must be >= 0 (got {self.beta!r}); use 5, or 0 for a constant gate (GRPO+OPSD).")
        require(finite(self.pg_coef) and self.pg_coef >= 0,
                f"pg_coef must be >= 0 (got {self.pg_coef!r}); 1 keeps the GRPO term, 0 drops it.")


@dataclass
class OPSDCreditConfig(SDARCreditConfig):
    """Parameters of OPSD: the gated distillation loss alone, as every released ``opsd_trainer``
    script runs it (``sdar_coef=0.01``, ``gate_beta=5.0``, ``pg_loss_coef=0``)."""

    lambda_: float = field(
        default=0.01, metadata={"help": "Weight of the gated loss (the only loss term); 0.01 in the released scripts."}
    )
    pg_coef: float = field(default=0.0, metadata={"help": "OPSD trains without the policy-gradient term."})


def sdar_loss(
    logprobs: Tensor, teacher_logprobs: Tensor, mask: Tensor, beta: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``token-mean(g * (l_T - l))`` with ``g = sg(sigmoid(beta * (l_T - sg(l))))``.

    Returns the loss (gradient through ``logprobs`` only), the gate and the gap.
    """
    teacher = where_mask(teacher_logprobs.detach().to(logprobs.dtype), mask)
    current = where_mask(logprobs, mask)
    gap = (teacher - current.detach())
    gate = torch.sigmoid(beta * gap).detach()
    loss = masked_mean(gate * (teacher - current), mask)
    return loss, gate, gap


class SDARCredit(GRPOCredit):
    """SDAR: GRPO advantages plus ``lambda * L_SDAR`` on the current log-probs."""

    name: ClassVar[str] = "sdar"
    config_cls: ClassVar[type[CreditConfig]] = SDARCreditConfig
    needs_teacher_logprobs: ClassVar[bool] = True
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = PrivilegedTextTeacher
    has_aux_loss: ClassVar[bool] = True
    config: SDARCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """``pg_coef`` times the verl-agent GRPO advantages."""
        self.check_batch(batch)
        per_row = self.config.pg_coef * grpo_row_advantages(batch, self.config) + 0.0  # no -0.0
        return CreditOutput(broadcast(per_row, batch.completion_mask), self._row_metrics(batch, per_row))

    def aux_loss(
        self, batch: CreditBatch, logprobs: Tensor, logits: Tensor | None = None
    ) -> AuxLossOutput:
        """``lambda * token-mean(g * (l_T - l))`` and the gate statistics."""
        self.check_batch(batch)
        check_logprobs("logprobs", logprobs, batch)
        assert batch.teacher_logprobs is not None
        mask = batch.completion_mask.to(logprobs.device)
        loss, gate, gap = sdar_loss(logprobs, batch.teacher_logprobs.to(logprobs.device), mask, self.config.beta)
        active = (gate > 0.5).to(gate.dtype)
        metrics = {
            self.metric("loss"): float(loss.detach()),
            self.metric("gate_mean"): float(masked_mean(gate, mask)),
            self.metric("gate_active_ratio"): float(masked_mean(active, mask)),
            self.metric("teacher_gap_mean"): float(masked_mean(gap, mask)),
        }
        return AuxLossOutput(self.config.lambda_ * loss, metrics)

    def rows_with_other_terms(self, batch: CreditBatch) -> Tensor:
        """Every row carries the distillation term, unless ``lambda_`` is 0."""
        return torch.full((batch.num_rows,), self.config.lambda_ != 0, dtype=torch.bool)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """The advantages are ``pg_coef`` times GRPO's."""
        return ("grpo", self.config.pg_coef)


class OPSDCredit(SDARCredit):
    """OPSD: the gated self-distillation loss alone (advantages are 0)."""

    name: ClassVar[str] = "opsd"
    config_cls: ClassVar[type[CreditConfig]] = OPSDCreditConfig

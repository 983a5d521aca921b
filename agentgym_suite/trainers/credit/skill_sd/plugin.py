"""Skill-SD: GRPO plus an importance-weighted k3 estimate of KL(student || teacher)."""

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
    finite,
    masked_mean,
    require,
    TeacherContext,
    TeacherSettings,
    where_mask,
)
from agentgym_suite.trainers.credit.grpo import GRPOCredit, GRPOCreditConfig
from agentgym_suite.trainers.credit.self_distillation import PrivilegedTextTeacher

RATIO_CAP = 10.0
K3_CAP = 20.0


@dataclass
class SkillSDCreditConfig(GRPOCreditConfig):
    """Parameters of Skill-SD."""

    lambda_: float = field(default=0.001, metadata={"help": "Weight of the k3 distillation term."})

    def __post_init__(self) -> None:
        """Validate the parameters."""
        super().__post_init__()
        require(finite(self.lambda_) and self.lambda_ >= 0,
                f"lambda_ must be >= 0 (got {self.lambda_!r}); the paper uses 0.001.")


def skill_sd_terms(
    logprobs: Tensor, old_logprobs: Tensor, teacher_logprobs: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-token ``rho``, ``k3`` and the loss ``token-mean(rho * k3)``.

    ``rho = exp(min(l - l_old, 10))``, ``k3 = exp(min(l_T - l, 20)) - 1 - (l_T - l)``;
    gradient flows through ``l`` in both factors (only the old and teacher terms are detached).
    """
    current = where_mask(logprobs, mask)
    old = where_mask(old_logprobs.detach().to(logprobs.dtype), mask)
    teacher = where_mask(teacher_logprobs.detach().to(logprobs.dtype), mask)
    rho = torch.exp(torch.clamp(current - old, max=RATIO_CAP))
    diff = teacher - current
    k3 = torch.exp(torch.clamp(diff, max=K3_CAP)) - 1.0 - diff
    return rho, k3, masked_mean(rho * k3, mask)


class SkillSDCredit(GRPOCredit):
    """Skill-SD: GRPO advantages plus ``lambda * token-mean(rho * k3)``."""

    name: ClassVar[str] = "skill_sd"
    config_cls: ClassVar[type[CreditConfig]] = SkillSDCreditConfig
    needs_old_logprobs: ClassVar[bool] = True
    needs_teacher_logprobs: ClassVar[bool] = True
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = PrivilegedTextTeacher
    has_aux_loss: ClassVar[bool] = True
    config: SkillSDCreditConfig

    def aux_loss(
        self, batch: CreditBatch, logprobs: Tensor, logits: Tensor | None = None
    ) -> AuxLossOutput:
        """``lambda * token-mean(rho * k3)``."""
        self.check_batch(batch)
        check_logprobs("logprobs", logprobs, batch)
        assert batch.old_logprobs is not None and batch.teacher_logprobs is not None
        mask = batch.completion_mask.to(logprobs.device)
        rho, k3, loss = skill_sd_terms(
            logprobs, batch.old_logprobs.to(logprobs.device), batch.teacher_logprobs.to(logprobs.device), mask
        )
        metrics = {
            self.metric("loss"): float(loss.detach()),
            self.metric("k3_mean"): float(masked_mean(k3.detach(), mask)),
            self.metric("ratio_mean"): float(masked_mean(rho.detach(), mask)),
        }
        return AuxLossOutput(self.config.lambda_ * loss, metrics)

    def rows_with_other_terms(self, batch: CreditBatch) -> Tensor:
        """Every row carries the distillation term, unless ``lambda_`` is 0."""
        return torch.full((batch.num_rows,), self.config.lambda_ != 0, dtype=torch.bool)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """Skill-SD leaves GRPO's advantages unchanged."""
        return ("grpo", 1.0)

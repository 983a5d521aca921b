"""RLSD: GRPO advantages reweighted per token by the clipped teacher/student likelihood
ratio, with a mixing weight that decays linearly to 0."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import torch

from agentgym_suite.trainers.credit.base import (
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
class RLSDCreditConfig(GRPOCreditConfig):
    """Parameters of RLSD."""

    lambda_: float = field(default=0.5, metadata={"help": "Initial mixing weight lambda."})
    decay_steps: int = field(
        default=100, metadata={"help": "lambda decays linearly to 0 over this many steps (0 = no decay)."}
    )
    clip_eps: float = field(default=0.2, metadata={"help": "Ratio clip: clip(exp(sign(A)*gap), 1-eps, 1+eps)."})

    def __post_init__(self) -> None:
        """Validate the parameters."""
        super().__post_init__()
        require(finite(self.lambda_) and 0.0 <= self.lambda_ <= 1.0,
                f"lambda_ must be in [0, 1] (got {self.lambda_!r}); the paper uses 0.5.")
        require(isinstance(self.decay_steps, int) and self.decay_steps >= 0,
                f"decay_steps must be an int >= 0 (got {self.decay_steps!r}); the paper uses 100.")
        require(finite(self.clip_eps) and 0.0 <= self.clip_eps < 1.0,
                f"clip_eps must be in [0, 1) (got {self.clip_eps!r}); the paper uses 0.2.")


def decayed_lambda(lambda0: float, step: int, decay_steps: int) -> float:
    """``lambda0 * max(0, 1 - step / decay_steps)``; constant when ``decay_steps == 0``.

    ``step`` counts training steps from 1, as verl's ``global_steps`` that the original
    ``RLSDRayTrainer._get_rlsd_lambda`` reads: the first step already uses
    ``lambda0 * (1 - 1 / decay_steps)`` and step ``decay_steps`` uses 0.
    """
    if decay_steps == 0:
        return lambda0
    return lambda0 * max(0.0, 1.0 - step / decay_steps)


class RLSDCredit(GRPOCredit):
    """RLSD: ``A_t = A * ((1 - lambda) + lambda * clip(exp(sign(A) * gap_t), 1-eps, 1+eps))``
    with ``gap_t = l^T_t - l^old_t`` (the rollout log-prob stands in for ``sg(l_t)``)."""

    name: ClassVar[str] = "rlsd"
    config_cls: ClassVar[type[CreditConfig]] = RLSDCreditConfig
    needs_old_logprobs: ClassVar[bool] = True
    needs_teacher_logprobs: ClassVar[bool] = True
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = PrivilegedTextTeacher
    config: RLSDCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Token-reweighted GRPO advantages."""
        self.check_batch(batch)
        assert batch.teacher_logprobs is not None and batch.old_logprobs is not None
        cfg = self.config
        mask = batch.completion_mask.bool()
        per_row = grpo_row_advantages(batch, cfg)
        base = broadcast(per_row, mask)
        gap = where_mask(batch.teacher_logprobs.to(torch.float32) - batch.old_logprobs.to(torch.float32), mask)
        lam = decayed_lambda(cfg.lambda_, batch.step + 1, cfg.decay_steps)  # the step this batch trains, from 1
        ratio = torch.exp(torch.sign(base) * gap).clamp(1.0 - cfg.clip_eps, 1.0 + cfg.clip_eps)
        weight = (1.0 - lam) + lam * ratio
        adv = where_mask(base * weight, mask)
        metrics = {
            self.metric("lambda"): lam,
            self.metric("weight_mean"): float(masked_mean(weight, mask)),
            self.metric("teacher_gap_mean"): float(masked_mean(gap, mask)),
        }
        return CreditOutput(adv, metrics)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """With an uninformative teacher every ratio is 1."""
        return ("grpo", 1.0)

"""EnvACE role-wise GRPO: Caller and Simulator rows share the trajectory's score and get a
mean-only advantage against the rows of the same task and role."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch

from agentgym_suite.trainers.credit.base import (
    CreditAssigner,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    finite,
    require,
)
from agentgym_suite.trainers.credit.grouping import broadcast, group_normalize


@dataclass
class EnvACECreditConfig(CreditConfig):
    """Parameters of EnvACE's role-wise GRPO."""

    invalid_penalty: float = field(
        default=0.0,
        metadata={"help": "EnvACE ends the episode with reward 0 on a malformed call, so no extra penalty."},
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        require(finite(self.invalid_penalty) and self.invalid_penalty >= 0,
                f"invalid_penalty must be >= 0 (got {self.invalid_penalty!r}); EnvACE uses 0.")


class EnvACECredit(CreditAssigner):
    """EnvACE: group key = (task, role); ``A_row = R - mean(R over that task's rows of that
    role)``; rows are not deduplicated, a lone row gets 0. The task is ``task_ids`` when given,
    else the group id."""

    name: ClassVar[str] = "envace"
    config_cls: ClassVar[type[CreditConfig]] = EnvACECreditConfig
    roles: ClassVar[tuple[str, ...]] = ("caller", "simulator")
    own_invalid_penalty: ClassVar[bool] = True
    config: EnvACECreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Role-wise mean-only advantages broadcast over each row's model tokens."""
        self.check_batch(batch)
        tasks = batch.task_ids if batch.task_ids is not None else batch.group_ids
        keys = list(zip(tasks, batch.roles))
        scores = batch.returns.to(torch.float32) - self.config.invalid_penalty * batch.invalid.to(torch.float32)
        per_row = group_normalize(scores, keys, std_normalize=False, singleton="zero")
        sim = torch.tensor([r == "simulator" for r in batch.roles], dtype=torch.bool)
        metrics = {
            self.metric("score_mean"): float(scores.mean()) if scores.numel() else 0.0,
            self.metric("simulator_row_ratio"): float(sim.float().mean()) if scores.numel() else 0.0,
            self.metric("advantage_abs_mean"): float(per_row.abs().mean()) if per_row.numel() else 0.0,
        }
        return CreditOutput(broadcast(per_row, batch.completion_mask), metrics)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """With Caller rows only and one row per trajectory this is Dr. GRPO."""
        return ("dr_grpo", 1.0)

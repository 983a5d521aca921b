"""A credit plug-in of your own: GRPO in which earlier turns of an episode get less credit.

With this file's folder on PYTHONPATH, train with it by its import path:

    PYTHONPATH=examples agentgym train configs/smoke_cpu.yaml --credit discounted_grpo:DiscountedGRPOCredit \
        --credit_params '{"gamma": 0.8}'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch

from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch, CreditConfig, CreditOutput
from agentgym_suite.trainers.credit.grouping import broadcast, group_normalize, trajectory_rows


@dataclass
class DiscountedGRPOConfig(CreditConfig):
    """The plug-in's parameters and their defaults (``credit_params`` sets them)."""

    gamma: float = field(default=0.9, metadata={"help": "Credit of a turn k turns before the last: gamma**k."})
    invalid_penalty: float = field(default=0.1, metadata={"help": "Subtracted from an invalid row's score."})

    def __post_init__(self) -> None:
        """Reject bad values with a message that says what to use."""
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1] (got {self.gamma!r}); 1 gives plain GRPO.")
        if not self.invalid_penalty >= 0.0:
            raise ValueError(f"invalid_penalty must be >= 0 (got {self.invalid_penalty!r}).")


class DiscountedGRPOCredit(CreditAssigner):
    """``A_row = gamma**(turns after the row) * GRPO advantage of the row``."""

    name: ClassVar[str] = "discounted_grpo"
    config_cls: ClassVar[type[CreditConfig]] = DiscountedGRPOConfig
    config: DiscountedGRPOConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Group-normalised scores, discounted by each row's distance to its episode's end."""
        self.check_batch(batch)
        scores = batch.returns.float() - self.config.invalid_penalty * batch.invalid.float()
        grpo = group_normalize(scores, batch.group_ids, std_normalize=True)
        discount = torch.ones_like(grpo)
        for rows in trajectory_rows(batch.traj_ids, batch.turn_idx).values():
            for k, row in enumerate(rows):
                discount[row] = self.config.gamma ** (len(rows) - 1 - k)
        metrics = {self.metric("discount_mean"): float(discount.mean()) if batch.num_rows else 1.0}
        return CreditOutput(broadcast(grpo * discount, batch.completion_mask), metrics)

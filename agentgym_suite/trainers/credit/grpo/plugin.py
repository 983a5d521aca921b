"""GRPO in the verl-agent variant (statistics over all step rows of a group) and Dr. GRPO
(the same without std normalisation)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch
from torch import Tensor

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
class GRPOCreditConfig(CreditConfig):
    """Parameters of the verl-agent GRPO advantage."""

    invalid_penalty: float = field(
        default=0.1,
        metadata={"help": "c in score = return - c*invalid: 0.1 ALFWorld/WebShop, 0.01 Search."},
    )
    std_normalize: bool = field(
        default=True, metadata={"help": "Divide by the group std (False = Dr. GRPO)."}
    )
    eps: float = field(default=1e-6, metadata={"help": "Added to the std before dividing."})
    singleton: str = field(
        default="raw",
        metadata={
            "help": "Advantage of a group with a single row: 'raw' keeps verl's convention "
            "(mean 0, std 1: the raw score), 'zero' gives 0."
        },
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        require(
            finite(self.invalid_penalty) and self.invalid_penalty >= 0,
            f"invalid_penalty must be a finite number >= 0 (got {self.invalid_penalty!r}); "
            "use 0.1 for ALFWorld/WebShop, 0.01 for Search, 0 to disable.",
        )
        require(
            finite(self.eps) and self.eps > 0,
            f"eps must be > 0 (got {self.eps!r}); the default 1e-6 matches verl-agent.",
        )
        require(
            self.singleton in ("raw", "zero"),
            f"singleton must be 'raw' or 'zero' (got {self.singleton!r}).",
        )


@dataclass
class DrGRPOCreditConfig(GRPOCreditConfig):
    """Parameters of Dr. GRPO: GRPO without the std division."""

    std_normalize: bool = field(
        default=False, metadata={"help": "Dr. GRPO does not divide by the std; keep False."}
    )


def row_scores(batch: CreditBatch, invalid_penalty: float) -> Tensor:
    """``return - c * invalid`` per row, float32 ``(R,)``."""
    return batch.returns.to(torch.float32) - invalid_penalty * batch.invalid.to(torch.float32)


def grpo_row_advantages(batch: CreditBatch, cfg: GRPOCreditConfig) -> Tensor:
    """Per-row verl-agent GRPO advantage ``(R,)``: statistics over all rows of each group."""
    return group_normalize(
        row_scores(batch, cfg.invalid_penalty),
        batch.group_ids,
        std_normalize=cfg.std_normalize,
        eps=cfg.eps,
        singleton=cfg.singleton,  # type: ignore[arg-type]
    )


class GRPOCredit(CreditAssigner):
    """verl-agent GRPO: ``A_row = (s_row - mean) / (std + 1e-6)`` over all step rows of the
    group (not over the G trajectories), broadcast over the row's tokens."""

    name: ClassVar[str] = "grpo"
    config_cls: ClassVar[type[CreditConfig]] = GRPOCreditConfig
    config: GRPOCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Group-normalised row scores broadcast over each row's model tokens."""
        self.check_batch(batch)
        per_row = grpo_row_advantages(batch, self.config)
        return CreditOutput(
            broadcast(per_row, batch.completion_mask), self._row_metrics(batch, per_row)
        )

    def one_turn_equivalent(self) -> tuple[str, float]:
        """GRPO is its own plain variant."""
        return (self.name, 1.0)

    def _row_metrics(self, batch: CreditBatch, per_row: Tensor) -> dict[str, float]:
        scores = row_scores(batch, self.config.invalid_penalty)
        return {
            self.metric("score_mean"): float(scores.mean()) if scores.numel() else 0.0,
            self.metric("advantage_abs_mean"): float(per_row.abs().mean()) if per_row.numel() else 0.0,
            self.metric("invalid_ratio"): float(batch.invalid.float().mean()) if per_row.numel() else 0.0,
        }


class DrGRPOCredit(GRPOCredit):
    """Dr. GRPO: ``A_row = s_row - mean`` over all step rows of the group."""

    name: ClassVar[str] = "dr_grpo"
    config_cls: ClassVar[type[CreditConfig]] = DrGRPOCreditConfig

"""A credit plug-in with an input of its own: GRPO in which a short reply earns more of its return.

The plug-in needs each row's reply length in tokens, which no other method reads, so it declares
that input as a provider (``row_inputs``): the trainer runs it on its rows when it builds the credit
batch and the value arrives in ``CreditBatch.extras["reply_tokens"]``, gathered over processes
and selected per micro-batch with the rest of the batch. Nothing in the suite is edited.

With this file's folder on PYTHONPATH, train with it by its import path:

    PYTHONPATH=examples agentgym train configs/smoke_cpu.yaml \
        --credit length_penalty_credit:LengthPenaltyCredit --credit_params '{"per_token": 0.01}'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch, CreditConfig, CreditOutput, RowField, RowInput
from agentgym_suite.trainers.credit.grouping import broadcast, group_normalize


def reply_tokens(rows: Sequence[Any]) -> list[int]:
    """Each row's reply length: the tokens the model generated for it (``Row.completion_ids``)."""
    return [len(row.completion_ids) for row in rows]


REPLY_TOKENS = RowField("reply_tokens", reply_tokens, requires="Row.completion_ids")
"""The plug-in's input: the reply length of each row, in ``CreditBatch.extras``."""


@dataclass
class LengthPenaltyConfig(CreditConfig):
    """The plug-in's parameters and their defaults (``credit_params`` sets them)."""

    per_token: float = field(default=0.001, metadata={"help": "A row's score is its return / (1 + per_token * tokens)."})

    def __post_init__(self) -> None:
        """Reject bad values with a message that says what to use."""
        if not self.per_token >= 0.0:
            raise ValueError(f"per_token must be >= 0 (got {self.per_token!r}); 0 gives plain GRPO.")


class LengthPenaltyCredit(CreditAssigner):
    """``A_row = GRPO-normalised return / (1 + per_token * reply tokens of the row)`` (0 for no return)."""

    name: ClassVar[str] = "length_penalty"
    config_cls: ClassVar[type[CreditConfig]] = LengthPenaltyConfig
    row_inputs: ClassVar[tuple[RowInput, ...]] = (REPLY_TOKENS,)
    config: LengthPenaltyConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Group-normalised scores, each return discounted by its reply's length."""
        self.check_batch(batch)  # names "reply_tokens" if the batch lacks it
        lengths = torch.tensor(batch.extras[REPLY_TOKENS.name], dtype=torch.float32, device=batch.returns.device)
        scores = batch.returns.float() / (1.0 + self.config.per_token * lengths)
        grpo = group_normalize(scores, batch.group_ids, std_normalize=True)
        metrics = {self.metric("reply_tokens_mean"): float(lengths.mean()) if batch.num_rows else 0.0}
        return CreditOutput(broadcast(grpo, batch.completion_mask), metrics)

"""EnvACE role-wise GRPO, as the released trainer computes it (Within-yao/EnvACE 173e941).

Every row of a trajectory, Caller and Simulator alike, carries the trajectory's score
(``rollout_loop.gather_rollout_data`` gives each row the episode's reward; the checklist
reward manager divides it by ``num_checklists * num_turns``). A row whose generated text is
empty is penalised by 0.1 (``ray_trainer.apply_invalid_action_penalty`` with verl's default
``invalid_action_penalty_coef``; the agents mark a row invalid when its text is empty). The
advantage is then ``score - mean(score)`` over the rows of the same task and role
(``compute_grpo_outcome_advantage`` with ``group_by_agent_id=True`` and
``norm_adv_by_std_in_grpo=False``): rows are not deduplicated, and a group of one row keeps its
raw score (verl's mean 0 for a lone row). ``tests/conformance/test_envace.py`` checks this
against the released functions.
"""

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
from agentgym_suite.trainers.credit.inputs import RowField, RowInput

TASK_IDS = RowField("task_ids", lambda rows: [r.episode.task_id for r in rows],
                    requires="Row.episode.task_id: the task the row's episode played")
"""EnvACE's input: each row's task (rows of one task and role share a baseline, across seeds), in
``CreditBatch.extras["task_ids"]``."""

RELEASED_EMPTY_ROW_PENALTY = 0.1
"""verl's ``invalid_action_penalty_coef`` default, which the released launcher keeps."""


@dataclass
class EnvACECreditConfig(CreditConfig):
    """Parameters of EnvACE's role-wise GRPO."""

    invalid_penalty: float = field(
        default=RELEASED_EMPTY_ROW_PENALTY,
        metadata={"help": "Subtracted from the score of a row marked invalid: for EnvACE rows, one whose generated "
                          "text is empty (the released trainer's 0.1)."},
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        require(finite(self.invalid_penalty) and self.invalid_penalty >= 0,
                f"invalid_penalty must be >= 0 (got {self.invalid_penalty!r}); EnvACE's released trainer uses 0.1.")


class EnvACECredit(CreditAssigner):
    """EnvACE: group key = (task, role); ``A_row = s - mean(s over that task's rows of that
    role)`` with ``s = R - invalid_penalty * invalid``; rows are not deduplicated, a lone row keeps
    ``s``. The task is the ``task_ids`` input (:data:`TASK_IDS`)."""

    name: ClassVar[str] = "envace"
    config_cls: ClassVar[type[CreditConfig]] = EnvACECreditConfig
    roles: ClassVar[tuple[str, ...]] = ("caller", "simulator")
    own_invalid_penalty: ClassVar[bool] = True
    run_needs: ClassVar[str] = ("trains the world-model (simulator) role too, which needs a rehearsal env whose world "
                                "model is the policy (env_mode: rehearsal).")
    row_inputs: ClassVar[tuple[RowInput, ...]] = (TASK_IDS,)
    config: EnvACECreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Role-wise mean-only advantages broadcast over each row's model tokens."""
        self.check_batch(batch)
        keys = list(zip(batch.extras[TASK_IDS.name], batch.roles))
        scores = batch.returns.to(torch.float32) - self.config.invalid_penalty * batch.invalid.to(torch.float32)
        per_row = group_normalize(scores, keys, std_normalize=False, singleton="raw")
        sim = torch.tensor([r == "simulator" for r in batch.roles], dtype=torch.bool)
        metrics = {
            self.metric("score_mean"): float(scores.mean()) if scores.numel() else 0.0,
            self.metric("simulator_row_ratio"): float(sim.float().mean()) if scores.numel() else 0.0,
            self.metric("advantage_abs_mean"): float(per_row.abs().mean()) if per_row.numel() else 0.0,
            self.metric("invalid_row_ratio"): float(batch.invalid.float().mean()) if scores.numel() else 0.0,
        }
        return CreditOutput(broadcast(per_row, batch.completion_mask), metrics)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """With Caller rows only and one row per trajectory this is Dr. GRPO."""
        return ("dr_grpo", 1.0)

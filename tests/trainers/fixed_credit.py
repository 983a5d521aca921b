"""Credit plug-ins with advantages fixed by the row's trajectory, for tests of which rows the
trainer trains (they do not depend on what the tiny model happens to write)."""

from __future__ import annotations

from typing import ClassVar

import torch

from agentgym_suite.trainers.credit import CreditBatch, CreditOutput
from agentgym_suite.trainers.credit.grouping import broadcast
from agentgym_suite.trainers.credit.grpo import GRPOCredit


def _trajectory_number(traj_id: object) -> int:
    """The rollout's position in its generation batch: trajectory ids end in ``:<position>``."""
    return int(str(traj_id).rsplit(":", 1)[1])


class OddTrajectoriesCredit(GRPOCredit):
    """Advantage 1 on the rows of odd-numbered rollouts, exactly 0 on the others."""

    name: ClassVar[str] = "odd_trajectories"

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        per_row = torch.tensor([float(_trajectory_number(t) % 2) for t in batch.traj_ids])
        return CreditOutput(broadcast(per_row.to(batch.completion_mask.device), batch.completion_mask))


class NothingToLearnCredit(GRPOCredit):
    """Advantage 0 everywhere: every group won (or lost)."""

    name: ClassVar[str] = "nothing_to_learn"

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        return CreditOutput(torch.zeros(batch.completion_mask.shape))

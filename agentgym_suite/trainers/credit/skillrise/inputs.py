"""SkillRise's declared input: each row's task position inside its trial, computed from the rows
(:mod:`agentgym_suite.trainers.credit.inputs`) into ``CreditBatch.extras``."""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.trainers.credit.base import CreditBatch
from agentgym_suite.trainers.credit.inputs import RowField


def trial_positions(rows: Sequence[Any]) -> list[int]:
    """Each row's task position ``p`` inside its SkillRise trial (0..K-1; ``Row.position``, which the
    rows read from the trial's ``position`` info key)."""
    return [int(row.position) for row in rows]


POSITIONS = RowField("positions", trial_positions, requires="Row.position (the trial's position info key)")
"""SkillRise's input: the task position of each row inside its trial, in ``CreditBatch.extras``."""


def positions_of(batch: CreditBatch) -> list[int]:
    """The batch's ``positions`` input (``check_batch`` has made sure it is there)."""
    return [int(p) for p in batch.extras[POSITIONS.name]]

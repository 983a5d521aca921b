"""A fixed, hashed holdout of a benchmark's task ids, for benchmarks that publish no training split.

A task id's place in the holdout depends on the id alone (its SHA-1), so the split is the same on
every machine, in every process and for any order of the ids. World-model grounding plays the held-out
tasks (:meth:`agentgym_suite.core.tool_env.ToolEnv.training_tasks`) and evaluations leave them out
(:meth:`agentgym_suite.core.tool_env.ToolEnv.evaluation_tasks`).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

HOLDOUT_FRACTION = 0.2
"""Share of a benchmark's tasks held out as its grounding (training) split when it publishes none."""


def _bucket(task_id: str) -> float:
    return int(hashlib.sha1(task_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF


def holdout(task_ids: Sequence[str], fraction: float = HOLDOUT_FRACTION) -> list[str]:
    """The fixed, hashed share of ``task_ids`` held out for grounding (at least one when there are two or more)."""
    ids = list(task_ids)
    chosen = [t for t in ids if _bucket(t) < fraction]
    if not chosen and len(ids) > 1:
        chosen = [min(ids, key=_bucket)]
    return chosen

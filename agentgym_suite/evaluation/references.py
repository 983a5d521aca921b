"""Published reference scores next to a run's own numbers (``agentgym eval``).

An env's :class:`~agentgym_suite.core.env_card.EnvCard` lists published scores with the model
and split they were measured on; a run is compared with those whose model is the run's model
and whose split is the run's split, or one of its task types (Search-QA's per-dataset rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentgym_suite.core.env_card import EnvCard, ReferenceScore


@dataclass(frozen=True)
class ReferenceRow:
    """One published score and the run's number on the same model, split and metric."""

    reference: ReferenceScore
    measured: float | None
    episodes: int | None


def card_of(env_id: str) -> EnvCard | None:
    """The card declared for ``env_id`` (None for unknown ids or envs without one)."""
    from agentgym_suite.registration import entry, env_card

    try:
        return env_card(entry(env_id))
    except KeyError:
        return None


def _measured(summary: dict[str, Any], ref: ReferenceScore) -> tuple[float | None, int | None] | None:
    if ref.split == summary.get("split"):
        return summary.get(ref.summary_key), summary.get("episodes")
    per_type = (summary.get("by_task_type") or {}).get(ref.split)
    if per_type is not None:
        return per_type.get(ref.summary_key), per_type.get("episodes")
    return None


def reference_rows(summary: dict[str, Any], card: EnvCard | None = None) -> list[ReferenceRow]:
    """Published scores measured with the run's model on the run's split (or one of its task types)."""
    card = card if card is not None else card_of(str(summary.get("env_id", "")))
    if card is None:
        return []
    agent = str(summary.get("agent", ""))
    rows = []
    for ref in card.references:
        found = _measured(summary, ref)
        if found is not None and ref.same_model(agent):
            rows.append(ReferenceRow(ref, *found))
    return rows

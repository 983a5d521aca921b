"""What ChecklistTools-v0 is: EnvACE's published training format, read by our code; no scorer to compare."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="EnvACE checklist tool-use training sets",
    version="Within-yao/EnvACE 173e941 (ChecklistDataset / MCPChecklistTool format)",
    upstream="github.com/Within-yao/EnvACE",
    data_licence="none ships: the user's own training sets, placed in $AGENTGYM_DATA/envace_checklist/",
    unchecked="EnvACE's published checklist format, parsed by our code; no official scorer to compare (its "
              "standards are judged by a model)",
    cost=EpisodeCost(640.0, "benchmarks/env_step_cost.py ChecklistTools-v0, oracle on the fixture set with its "
                            "stand-in judge (2026-12-02, load 10.2); a model judge costs one generation per turn"),
    notes="A training env: scores depend on the judge model, so they have no published counterpart.",
)
"""ChecklistTools-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

"""What SkillRise-v0 is: trials over a base env, scored by that env; nothing of its own to compare."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="SkillRise trials (k tasks or k attempts of a base env, with skill curation in between)",
    version="the SkillRise paper's trial protocol, implemented here (agentgym_suite/envs/skillrise)",
    upstream="none used: the trial wrapper is implemented here; each task is the base env's",
    data_licence="the base env's (see its row)",
    unchecked="no scorer of its own: every task is scored by the base env (see its row); the trial only orders "
              "tasks and carries the skill document",
    cost=EpisodeCost(32.3, "benchmarks/env_step_cost.py SkillRise-v0, oracle on fixture kwargs: TextWorld "
                           "coin-collector trials, k=2, Solve and Curate steps (2026-12-02, load 10.2)"),
    notes="The cost is the base env's step plus trial bookkeeping; Curate steps parse the skill document only.",
)
"""SkillRise-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

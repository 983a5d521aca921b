"""What TextWorld-v0 is: generated games, so no published leaderboard to compare with."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="TextWorld",
    version="textworld 1.7.0 (PyPI)",
    upstream="github.com/microsoft/TextWorld",
    data_licence="MIT (games generated locally)",
    cost=EpisodeCost(148.7, "benchmarks/env_overhead.py, 'TextWorld tw-cooking (go=6)' ours steps/s (2026-11-30)"),
    notes="Games are generated on this machine, so scores have no published counterpart.",
)
"""TextWorld-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

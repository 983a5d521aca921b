"""What ScienceWorld-v0 is measured against: upstream version, licence, conformance and published scores."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="ScienceWorld",
    version="scienceworld 1.2.3 (PyPI)",
    upstream="github.com/allenai/ScienceWorld",
    data_licence="Apache-2.0 (tasks ship in the package)",
    conformance=(
        "score (0-100) and completion of every step, gold path and perturbed plays, equal to the scienceworld "
        "package's own ScienceWorldEnv scoring on the same task variations",
    ),
    conformance_tests=("tests/conformance/test_scienceworld.py",),
    cost=EpisodeCost(8.7, "benchmarks/scienceworld_speed.py, 'ours, admissible list (60)' (2026-11-30)"),
    notes="Evaluation runs the simulator's test variations; train variations are for training only.",
)
"""ScienceWorld-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

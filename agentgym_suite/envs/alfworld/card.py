"""What ALFWorld-v0 is measured against: upstream version, licence, conformance and published scores."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost, ReferenceScore

_GIGPO = "GiGPO paper (Feng et al., arXiv:2505.10978v3), Table 1, ALFWorld 'All'"

CARD = EnvCard(
    benchmark="ALFWorld",
    version="alfworld 0.4.2 (PyPI); games json_2.1.1",
    upstream="github.com/alfworld/alfworld",
    data_licence="MIT (ALFWorld, ALFRED)",
    conformance=(
        "won and reward of every step, gold walkthrough and perturbed plays, equal to the alfworld package's own "
        "AlfredTWEnv on the same games",
    ),
    conformance_tests=("tests/conformance/test_alfworld.py",),
    references=(
        ReferenceScore(0.728, "success rate", "Qwen2.5-1.5B-Instruct", "valid_seen", _GIGPO, method="GRPO"),
        ReferenceScore(0.867, "success rate", "Qwen2.5-1.5B-Instruct", "valid_seen", _GIGPO, method="GiGPO"),
        ReferenceScore(0.776, "success rate", "Qwen2.5-7B-Instruct", "valid_seen", _GIGPO, method="GRPO"),
        ReferenceScore(0.908, "success rate", "Qwen2.5-7B-Instruct", "valid_seen", _GIGPO, method="GiGPO"),
    ),
    cost=EpisodeCost(11.4, "benchmarks/env_overhead.py, 'ALFWorld valid_unseen[0]' ours steps/s (2026-11-30)"),
    notes="verl-agent evaluates on valid_seen (in-distribution); valid_unseen is ALFWorld's out-of-distribution split.",
)
"""ALFWorld-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

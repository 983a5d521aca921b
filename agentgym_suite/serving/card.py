"""What Remote-v0 is: a client of any OpenEnv server; the served env's card is what it is measured against."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="any OpenEnv server's env (OpenEnv client)",
    version="openenv 0.10.0 (PyPI)",
    upstream="github.com/huggingface/OpenEnv",
    data_licence="the served env's",
    unchecked="no scorer of its own: rewards and infos are the served env's (against `agentgym serve`, "
              "tests/serving/test_seeded_equality.py checks a seeded episode equals the same id made locally)",
    cost=EpisodeCost(109.9, "benchmarks/env_step_cost.py Remote-v0: SyntheticTools-v0 over `agentgym serve` on "
                            "loopback, 0.45x its 243.9 steps/s inline in the same run (2026-12-02, load 10.3)"),
    notes="Cost is the served env's step plus one WebSocket round trip; a remote host adds its network latency.",
)
"""Remote-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

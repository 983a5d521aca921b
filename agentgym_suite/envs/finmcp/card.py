"""What FinMCP-v0 is measured against: DianJin-TIR's evaluation script on the same answers."""

from __future__ import annotations

from agentgym_suite.core.env_card import EnvCard, EpisodeCost

CARD = EnvCard(
    benchmark="FinMCP-Bench (DianJin-TIR)",
    version="aliyun/qwen-dianjin fd9b511 (DianJin-TIR)",
    upstream="github.com/aliyun/qwen-dianjin (DianJin-TIR)",
    data_licence="none found for DianJin-TIR: data not redistributed (bring your own copy; tests use invented "
                 "samples in its format)",
    conformance=(
        "per-sample tool-name TP/FP/FN and consistency, and the macro/micro precision/recall/F1 tables overall and "
        "by scenario, difficulty and task type, equal to DianJin-TIR's eval/evaluation.py on the same answers: gold, "
        "a step dropped, an extra or wrong call, steps out of order, no call, over 20 calls in a turn, a call that "
        "is not JSON",
    ),
    conformance_tests=("tests/conformance/test_finmcp.py",),
    cost=EpisodeCost(639.5, "benchmarks/env_step_cost.py FinMCP-v0, oracle on the fixture samples (2026-12-02, "
                            "load 10.1)"),
    notes="Not leaderboard-comparable by construction (declared departures): tool schemas are inferred from the "
          "recorded calls and calls are answered from the recordings, not the live MCP server.",
)
"""FinMCP-v0's card (see :class:`~agentgym_suite.core.env_card.EnvCard`)."""

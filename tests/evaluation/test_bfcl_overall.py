"""The BFCL-v4 overall score: bfcl-eval's category weights and aggregation, and ``agentgym eval --bfcl-overall``."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")

from agentgym_suite.envs.bfcl import data  # noqa: E402
from agentgym_suite.envs.bfcl.scoring import OVERALL_WEIGHTS, SCORED_CATEGORIES, CategoryScore, overall_score  # noqa: E402


def _upstream_weights() -> list[float]:
    """The weights literal passed to calculate_percentage_weighted_accuracy in bfcl-eval's leaderboard code."""
    source = (data.package_root() / "eval_checker" / "eval_runner_helper.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "calculate_percentage_weighted_accuracy":
            return [float(v) for v in ast.literal_eval(node.args[1])]
    raise AssertionError("bfcl-eval no longer computes its overall score with calculate_percentage_weighted_accuracy")


def test_overall_weights_are_bfcl_evals() -> None:
    assert list(OVERALL_WEIGHTS.values()) == _upstream_weights() == [10, 10, 10, 30, 40]


def test_overall_score_aggregation() -> None:
    perfect = {c: CategoryScore(1.0, 10) for c in SCORED_CATEGORIES}
    assert overall_score(perfect).overall == pytest.approx(1.0) and overall_score(perfect).complete
    only_multi_turn = {c: CategoryScore(1.0, 10) for c in SCORED_CATEGORIES if c.startswith("multi_turn")}
    assert overall_score(only_multi_turn).overall == pytest.approx(0.30)
    # simple is the mean of python, java and javascript: python alone is a third of it
    result = overall_score({"simple_python": CategoryScore(1.0, 400)})
    assert result.summaries["non_live"] == pytest.approx(1 / 12) and "simple_java" in result.missing
    # live categories are weighted by their entry counts, missing ones with their real count
    live = overall_score({"live_simple": CategoryScore(1.0, 258)}, counts={"live_multiple": 1053, "live_parallel": 16,
                                                                         "live_parallel_multiple": 24})
    assert live.summaries["live"] == pytest.approx(258 / (258 + 1053 + 16 + 24))
    agentic = overall_score({"web_search_base": CategoryScore(1.0, 100), "memory_kv": CategoryScore(0.6, 155)})
    assert agentic.summaries["agentic"] == pytest.approx((0.5 + 0.2) / 2)


def test_cli_bfcl_overall(tmp_path: Path) -> None:
    from agentgym_suite.cli import main

    code = main(["eval", "BFCL-v0", "--agent", "oracle", "--bfcl-overall", "simple,web_search_base", "--episodes", "2",
                 "--out", str(tmp_path), "--no-progress", "--json"])
    assert code == 0
    written = json.loads((tmp_path / "bfcl_overall.json").read_text())
    assert {r["bfcl_name"]: r["accuracy"] for r in written["rows"]} == {"simple_python": 1.0, "web_search_base": 1.0}
    assert written["overall"] == pytest.approx(0.1 * (1 / 12) + 0.4 * 0.25)
    assert (tmp_path / "simple" / "trajectories.jsonl").exists() and "memory_kv" in written["missing"]
    row = written["leaderboard_row"]
    assert row["Overall Acc"] == pytest.approx(written["overall"]) and row["Web Search Base"] == 1.0
    assert row["Web Search Acc"] is None and row["Non-Live Simple AST"] is None  # N/A as upstream: a part is missing
    assert row["Multi Turn Acc"] == 0.0 and written["comparable_to_leaderboard"] is False
    assert any("local corpus" in reason for reason in written["leaderboard_departures"])

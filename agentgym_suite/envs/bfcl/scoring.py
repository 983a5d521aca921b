"""The BFCL-v4 overall score from per-category accuracies, aggregated as bfcl-eval's leaderboard does.

``bfcl_eval.eval_checker.eval_runner_helper.generate_leaderboard_csv`` builds five summary
scores and weights them 10 / 10 / 10 / 30 / 40 (normalised):

* non-live: unweighted mean of simple (itself the mean of simple_python, simple_java,
  simple_javascript), multiple, parallel, parallel_multiple;
* live: mean of live_simple, live_multiple, live_parallel, live_parallel_multiple weighted
  by their entry counts;
* irrelevance: unweighted mean of irrelevance and live_irrelevance;
* multi-turn: unweighted mean of base, miss_func, miss_param, long_context;
* agentic: unweighted mean of web search (mean of base and no_snippet) and memory (mean of
  kv, vector, rec_sum).

A category that was not evaluated counts as 0, as upstream, and is listed as missing.
Categories are named as bfcl-eval names them (``simple_python``, ``multi_turn_base``…); see
:data:`~agentgym_suite.envs.bfcl.data.UPSTREAM_NAMES` for the env's names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

OVERALL_WEIGHTS: dict[str, float] = {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
"""Weights of the five summary scores in bfcl-eval's overall accuracy."""

NON_LIVE_SIMPLE = ("simple_python", "simple_java", "simple_javascript")
NON_LIVE_OTHER = ("multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
IRRELEVANCE = ("irrelevance", "live_irrelevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
SCORED_CATEGORIES = NON_LIVE_SIMPLE + NON_LIVE_OTHER + LIVE_AST + IRRELEVANCE + ("live_relevance",) + MULTI_TURN + \
    WEB_SEARCH + MEMORY
"""Every category the leaderboard reads (live_relevance is shown but not in the overall score)."""


@dataclass(frozen=True)
class CategoryScore:
    """Accuracy of one category and how many entries it has."""

    accuracy: float
    count: int


@dataclass
class OverallScore:
    """The overall accuracy, the five summaries, and which categories were not evaluated."""

    overall: float
    summaries: dict[str, float]
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every category of the overall score was evaluated."""
        return not self.missing


def _unweighted(scores: list[CategoryScore]) -> CategoryScore:
    return CategoryScore(sum(s.accuracy for s in scores) / len(scores), sum(s.count for s in scores))


def _weighted(scores: list[CategoryScore]) -> CategoryScore:
    total = sum(s.count for s in scores)
    return CategoryScore(sum(s.accuracy * s.count for s in scores) / total if total else 0.0, total)


def overall_score(results: Mapping[str, CategoryScore], counts: Mapping[str, int] | None = None) -> OverallScore:
    """Aggregate per-category results (bfcl-eval names) into the overall BFCL-v4 score.

    Args:
        results: category -> its accuracy and entry count, for the categories evaluated.
        counts: entry counts of categories not evaluated (the live mean weights by count even
            for a missing category, as upstream); default: one entry each.
    """
    counts = dict(counts or {})
    missing: list[str] = []

    def get(category: str) -> CategoryScore:
        if category in results:
            return results[category]
        missing.append(category)
        return CategoryScore(0.0, int(counts.get(category, 1)))

    simple = _unweighted([get(c) for c in NON_LIVE_SIMPLE])
    non_live = _unweighted([simple] + [get(c) for c in NON_LIVE_OTHER])
    live = _weighted([get(c) for c in LIVE_AST])
    irrelevance = _unweighted([get(c) for c in IRRELEVANCE])
    multi_turn = _unweighted([get(c) for c in MULTI_TURN])
    agentic = _unweighted([_unweighted([get(c) for c in WEB_SEARCH]), _unweighted([get(c) for c in MEMORY])])
    summaries = {"non_live": non_live.accuracy, "live": live.accuracy, "irrelevance": irrelevance.accuracy,
                 "multi_turn": multi_turn.accuracy, "agentic": agentic.accuracy}
    total = sum(OVERALL_WEIGHTS.values())
    overall = sum(summaries[name] * weight / total for name, weight in OVERALL_WEIGHTS.items())
    return OverallScore(overall=overall, summaries=summaries, missing=missing)

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


_SUMMARY_COLUMNS: dict[str, tuple[str, tuple[str, ...]]] = {
    # header -> (how bfcl-eval combines them, categories)
    "Non-Live AST Acc": ("non_live", NON_LIVE_SIMPLE + NON_LIVE_OTHER),
    "Non-Live Simple AST": ("simple", NON_LIVE_SIMPLE),
    "Live Acc": ("live", LIVE_AST),
    "Multi Turn Acc": ("multi_turn", MULTI_TURN),
    "Web Search Acc": ("mean", WEB_SEARCH),
    "Memory Acc": ("mean", MEMORY),
    "Irrelevance Detection": ("mean", IRRELEVANCE),
}
_CATEGORY_COLUMNS: dict[str, str] = {
    "Non-Live Multiple AST": "multiple",
    "Non-Live Parallel AST": "parallel",
    "Non-Live Parallel Multiple AST": "parallel_multiple",
    "Live Simple AST": "live_simple",
    "Live Multiple AST": "live_multiple",
    "Live Parallel AST": "live_parallel",
    "Live Parallel Multiple AST": "live_parallel_multiple",
    "Multi Turn Base": "multi_turn_base",
    "Multi Turn Miss Func": "multi_turn_miss_func",
    "Multi Turn Miss Param": "multi_turn_miss_param",
    "Multi Turn Long Context": "multi_turn_long_context",
    "Web Search Base": "web_search_base",
    "Web Search No Snippet": "web_search_no_snippet",
    "Memory KV": "memory_kv",
    "Memory Vector": "memory_vector",
    "Memory Recursive Summarization": "memory_rec_sum",
    "Relevance Detection": "live_relevance",
}
_ALWAYS_SHOWN = ("Live Acc", "Multi Turn Acc")
"""Section totals bfcl-eval shows even with a category missing (``display_na_if_category_missing=False``)."""
LEADERBOARD_COLUMNS: tuple[str, ...] = (
    "Overall Acc", "Non-Live AST Acc", "Non-Live Simple AST", "Non-Live Multiple AST", "Non-Live Parallel AST",
    "Non-Live Parallel Multiple AST", "Live Acc", "Live Simple AST", "Live Multiple AST", "Live Parallel AST",
    "Live Parallel Multiple AST", "Multi Turn Acc", "Multi Turn Base", "Multi Turn Miss Func", "Multi Turn Miss Param",
    "Multi Turn Long Context", "Web Search Acc", "Web Search Base", "Web Search No Snippet", "Memory Acc", "Memory KV",
    "Memory Vector", "Memory Recursive Summarization", "Relevance Detection", "Irrelevance Detection",
)
"""The score columns of bfcl-eval's overall leaderboard table (``COLUMNS_OVERALL``), in its order."""


def leaderboard_row(results: Mapping[str, CategoryScore], counts: Mapping[str, int] | None = None) -> dict[str, float | None]:
    """Each column of :data:`LEADERBOARD_COLUMNS` as bfcl-eval's ``data_overall.csv`` fills it.

    A summary column is None (bfcl-eval prints N/A) when one of its categories was not evaluated;
    ``Overall Acc`` and the section totals still count missing categories as 0, as upstream.
    """
    score = overall_score(results, counts)
    counts = dict(counts or {})

    def get(category: str) -> CategoryScore:
        return results.get(category) or CategoryScore(0.0, int(counts.get(category, 1)))

    row: dict[str, float | None] = {"Overall Acc": score.overall}
    for header, (how, members) in _SUMMARY_COLUMNS.items():
        if any(c not in results for c in members) and header not in _ALWAYS_SHOWN:
            row[header] = None
        elif how in score.summaries and how != "simple":
            row[header] = score.summaries[how]
        else:
            row[header] = _unweighted([get(c) for c in members]).accuracy
    for header, category in _CATEGORY_COLUMNS.items():
        row[header] = results[category].accuracy if category in results else None
    return {header: row[header] for header in LEADERBOARD_COLUMNS}

"""BFCL's evaluation sweep: ``agentgym eval BFCL-v0 --sweep categories:all`` (alias ``--bfcl-overall``).

Every category runs as its own resumable evaluation (``<out>/<category>/``) with the same
agent and settings; their success rates are combined with bfcl-eval's weights
(:mod:`agentgym_suite.envs.bfcl.scoring`) into the columns of bfcl-eval's overall leaderboard
table (``Overall Acc``, ``Non-Live AST Acc``, ``Live Acc``, ``Multi Turn Acc``, ``Web Search
Acc``, ``Memory Acc``, ``Relevance Detection``, ``Irrelevance Detection`` and their parts),
printed and written to ``<out>/bfcl_overall.json`` (``leaderboard_row``). Categories not run
count as 0 in the overall score, as on bfcl-eval's leaderboard, show N/A in their columns, and
are listed. Each category's own departures from the leaderboard (web search on the local
corpus, see :mod:`agentgym_suite.envs.bfcl.web_search`) are listed as its summary.json lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.core.sweeps import Sweep, SweepOutcome, SweepRequest, SweepTable, Variant, VariantResult
from agentgym_suite.envs.bfcl import data
from agentgym_suite.envs.bfcl.scoring import SCORED_CATEGORIES, CategoryScore, OverallScore, leaderboard_row, overall_score

OVERALL_FILE = "bfcl_overall.json"
MEMORY_MIN_TURNS = 600
"""Turn limit given to memory categories: their first question of a scenario also holds the
scenario's memory-writing conversations (about 110 user turns for the longest)."""


@dataclass
class BFCLOverall:
    """The ``categories`` sweep's typed result (``SweepOutcome.value``)."""

    score: OverallScore
    rows: list[dict[str, Any]]
    out_dir: Path
    leaderboard: dict[str, float | None] = field(default_factory=dict)
    """bfcl-eval's overall-table columns (header -> accuracy in [0, 1], the two format-sensitivity
    columns in points; None where it shows N/A)."""
    departures: list[str] = field(default_factory=list)
    """Every category's reasons for not being comparable to the leaderboard, without repeats."""


def parse_categories(text: str) -> list[str]:
    """``"all"`` (every category the env offers) or a comma list of the env's category names."""
    if text.strip() == "all":  # format_sensitivity is for prompting models and outside the score: name it to run it
        return [c for c in data.CATEGORIES if c != data.FORMAT_SENSITIVITY]
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("the categories sweep needs 'all' or categories such as base,simple,web_search_base")
    if len(set(names)) != len(names):
        raise ValueError(f"the categories sweep lists a category twice: {text!r}")
    for name in names:
        data.check_category(name)
    return names


def category_counts() -> dict[str, int]:
    """Entries per category (bfcl-eval names), read from the installed data; 1 where unreadable."""
    counts: dict[str, int] = {}
    for name in SCORED_CATEGORIES:
        env_name = next((k for k, v in data.UPSTREAM_NAMES.items() if v == name), None)
        try:
            if env_name is not None:
                counts[name] = len(data.load_questions(env_name))
            else:
                counts[name] = sum(1 for line in (data.data_root() / f"BFCL_v4_{name}.json").open() if line.strip())
        except (OSError, ValueError):
            counts[name] = 1
    return counts


def combine_categories(runs: dict[str, VariantResult], out_dir: Path) -> tuple[BFCLOverall, dict[str, Any]]:
    """The overall score of one finished evaluation per category (``runs``: category -> result), and
    the data written to :data:`OVERALL_FILE`."""
    results: dict[str, CategoryScore] = {}
    rows: list[dict[str, Any]] = []
    for category, result in runs.items():
        summary = result.summary
        rate = summary.get("success_rate")
        upstream = data.UPSTREAM_NAMES[category]
        total = len(data.load_questions(category))
        if rate is not None:
            results[upstream] = CategoryScore(float(rate), int(summary.get("tasks") or 0))
        rows.append({"category": category, "bfcl_name": upstream, "accuracy": rate, "tasks": summary.get("tasks"),
                     "of": total, "out_dir": str(result.out_dir)})
    counts = category_counts()
    score = overall_score(results, counts)
    leaderboard = leaderboard_row(results, counts)
    sensitivity = runs[data.FORMAT_SENSITIVITY].summary.get("benchmark_metrics", {}).get(data.FORMAT_SENSITIVITY) \
        if data.FORMAT_SENSITIVITY in runs else None
    leaderboard["Format Sensitivity Max Delta"] = sensitivity["accuracy_max_delta"] if sensitivity else None
    leaderboard["Format Sensitivity Standard Deviation"] = sensitivity["accuracy_std"] if sensitivity else None
    departures = list(dict.fromkeys(d for r in runs.values() for d in r.summary.get("leaderboard_departures") or []))
    partial = [r["category"] for r in rows if r["tasks"] != r["of"]]
    written = {
        "overall": score.overall, "summaries": score.summaries, "leaderboard_row": leaderboard, "missing": score.missing,
        "partial": partial, "rows": rows, "comparable_to_leaderboard": not departures and not score.missing and not partial,
        "leaderboard_departures": departures,
    }
    overall = BFCLOverall(score=score, rows=rows, out_dir=out_dir, leaderboard=leaderboard, departures=departures)
    return overall, written


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.2f}"


def overall_table(result: BFCLOverall, title: str = "") -> SweepTable:
    """bfcl-eval's overall-table columns, one per row (percent, N/A as upstream), then the categories run."""
    notes = [f"not evaluated, counted as 0: {', '.join(result.score.missing) or 'none'}"] + result.departures
    table = SweepTable(title=title or "BFCL-v4 (bfcl-eval's weights 10/10/10/30/40)", columns=["column", "accuracy %", "tasks"],
                       caption="; ".join(notes), left=("column",))
    for header, value in result.leaderboard.items():
        label = f"[bold]{header}[/bold]" if header.endswith("Acc") else header
        shown = "N/A" if value is None else f"{value:.2f}" if header.startswith("Format Sensitivity") else _pct(value)
        table.rows.append([label, shown, ""])
    table.sections = (len(table.rows),)
    for row in result.rows:
        table.rows.append([row["bfcl_name"], _pct(row["accuracy"]), f"{row['tasks']}/{row['of']}"])
    return table


def _variants(request: SweepRequest) -> list[Variant]:
    if "category" in request.env_kwargs:
        raise ValueError("give the categories with the categories sweep only, not in --env-kwargs as well.")
    variants = []
    for category in parse_categories(request.args or "all"):
        extra = {"max_turns": max(int(request.options.get("max_turns") or 0), MEMORY_MIN_TURNS)} \
            if category in data.MEMORY else {}
        variants.append(Variant(category, {"category": category}, options=extra))
    return variants


def _aggregate(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    overall, written = combine_categories(results, request.out_dir)
    return SweepOutcome(written, overall_table(overall, title=f"BFCL-v4 · {request.agent}"),
                        ["wrote one run folder per category"], {OVERALL_FILE: written}, overall)


def categories_sweep() -> Sweep:
    """``--sweep categories:all`` or ``categories:A,B`` (alias ``--bfcl-overall``): one run per category in
    ``<out>/<category>/``, then the BFCL-v4 overall score (``bfcl_overall.json``)."""
    return Sweep("categories", "categories:all|A,B,... (BFCL-v4 overall score)", _variants, _aggregate,
                 alias="--bfcl-overall", alias_metavar="all|A,B,...",
                 alias_help="alias of --sweep categories:all|A,B. BFCL-v0: evaluate every category (all) or the listed "
                            "ones, each in <out>/<category>/, and print the BFCL-v4 overall score with bfcl-eval's "
                            "category weights")


__all__ = ["BFCLOverall", "MEMORY_MIN_TURNS", "OVERALL_FILE", "categories_sweep", "category_counts", "combine_categories",
           "overall_table", "parse_categories"]

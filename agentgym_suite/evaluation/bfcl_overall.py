"""The BFCL-v4 overall score: ``agentgym eval BFCL-v0 --bfcl-overall all``.

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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from agentgym_suite.envs.bfcl import data
from agentgym_suite.envs.bfcl.scoring import SCORED_CATEGORIES, CategoryScore, OverallScore, leaderboard_row, overall_score
from agentgym_suite.evaluation.runner import EvalResult

OVERALL_FILE = "bfcl_overall.json"
MEMORY_MIN_TURNS = 600
"""Turn limit given to memory categories: their first question of a scenario also holds the
scenario's memory-writing conversations (about 110 user turns for the longest)."""


@dataclass
class BFCLOverall:
    """What :func:`run_bfcl_overall` returns."""

    score: OverallScore
    rows: list[dict[str, Any]]
    out_dir: Path
    results: dict[str, EvalResult] = field(default_factory=dict)
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
        raise ValueError("--bfcl-overall needs 'all' or categories such as base,simple,web_search_base")
    if len(set(names)) != len(names):
        raise ValueError(f"--bfcl-overall lists a category twice: {text!r}")
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


def run_bfcl_overall(agent: Any, categories: list[str], *, out_dir: str | Path, env_kwargs: dict[str, Any] | None = None,
                     **evaluate_kwargs: Any) -> BFCLOverall:
    """Evaluate ``agent`` on each category and combine the success rates into the overall score
    (the ``categories`` sweep, :func:`categories_sweep`; it also writes ``sweep.json``).

    ``env_kwargs`` must not set ``category``; ``evaluate_kwargs`` go to
    :func:`~agentgym_suite.evaluation.runner.evaluate` (memory categories get at least
    :data:`MEMORY_MIN_TURNS` turns).
    """
    from agentgym_suite.evaluation.sweep import run_sweep

    result = run_sweep("BFCL-v0", agent, categories_sweep(), args=",".join(categories), out_dir=out_dir,
                       env_kwargs=env_kwargs, **evaluate_kwargs)
    overall: BFCLOverall = result.outcome.value
    return overall


def combine_categories(runs: dict[str, EvalResult], out_dir: str | Path) -> BFCLOverall:
    """The overall score of one finished evaluation per category (``runs``: category -> result); writes
    :data:`OVERALL_FILE` into ``out_dir``."""
    out = Path(out_dir)
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
    out.mkdir(parents=True, exist_ok=True)
    partial = [r["category"] for r in rows if r["tasks"] != r["of"]]
    (out / OVERALL_FILE).write_text(json.dumps({
        "overall": score.overall, "summaries": score.summaries, "leaderboard_row": leaderboard, "missing": score.missing,
        "partial": partial, "rows": rows, "comparable_to_leaderboard": not departures and not score.missing and not partial,
        "leaderboard_departures": departures,
    }, indent=2) + "\n", encoding="utf-8")
    return BFCLOverall(score=score, rows=rows, out_dir=out, results=runs, leaderboard=leaderboard, departures=departures)


def _category_variants(args: str, env_id: str, env_kwargs: dict[str, Any], options: dict[str, Any]) -> list[Any]:
    from agentgym_suite.evaluation.sweep import Variant

    if "category" in env_kwargs:
        raise ValueError("give the categories with --bfcl-overall only, not in --env-kwargs as well.")
    variants = []
    for category in parse_categories(args or "all"):
        extra = {"max_turns": max(int(options.get("max_turns") or 0), MEMORY_MIN_TURNS)} if category in data.MEMORY else {}
        variants.append(Variant(category, {"category": category}, options=extra))
    return variants


def _category_aggregate(run: Any) -> Any:
    from agentgym_suite.evaluation.sweep import SweepOutcome

    result = combine_categories(run.results, run.out_dir)
    written = json.loads((run.out_dir / OVERALL_FILE).read_text(encoding="utf-8"))
    return SweepOutcome(written, overall_table(result, title=f"BFCL-v4 · {run.agent}"),
                        [f"wrote {run.out_dir / OVERALL_FILE} and one run folder per category"], result)


def categories_sweep() -> Any:
    """``--sweep categories:all`` or ``categories:A,B`` (alias ``--bfcl-overall``): one run per category in
    ``<out>/<category>/``, then the BFCL-v4 overall score (``bfcl_overall.json``)."""
    from agentgym_suite.evaluation.sweep import Sweep

    return Sweep("categories", "categories:all|A,B,... (BFCL-v4 overall score)", _category_variants, _category_aggregate)


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.2f}"


def overall_table(result: BFCLOverall, title: str = "") -> Table:
    """bfcl-eval's overall-table columns, one per row (percent, N/A as upstream), then the categories run."""
    notes = [f"not evaluated, counted as 0: {', '.join(result.score.missing) or 'none'}"] + result.departures
    table = Table(title=title or "BFCL-v4 (bfcl-eval's weights 10/10/10/30/40)", caption="; ".join(notes))
    for column in ("column", "accuracy %", "tasks"):
        table.add_column(column, justify="left" if column == "column" else "right")
    for header, value in result.leaderboard.items():
        label = f"[bold]{header}[/bold]" if header.endswith("Acc") else header
        shown = "N/A" if value is None else f"{value:.2f}" if header.startswith("Format Sensitivity") else _pct(value)
        table.add_row(label, shown, "")
    table.add_section()
    for row in result.rows:
        table.add_row(row["bfcl_name"], _pct(row["accuracy"]), f"{row['tasks']}/{row['of']}")
    return table


__all__ = ["BFCLOverall", "MEMORY_MIN_TURNS", "categories_sweep", "combine_categories", "OVERALL_FILE", "category_counts", "overall_table", "parse_categories",
           "run_bfcl_overall"]

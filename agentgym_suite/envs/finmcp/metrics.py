"""FinMCP-Bench's tool-name metrics, defined as DianJin-TIR's ``eval/evaluation.py`` defines them.

Per sample, the tool names the model called (every ``tool_calls`` entry of its messages, all
turns, in order) are compared with the recorded ones as multisets: TP the names in both, FP
the extra predicted ones, FN the missed recorded ones; ``consist`` is 1 when the two name
sequences are equal. A ratio whose denominator is 0 counts 0 (upstream's ``safe_div``), so a
sample where neither side calls a tool has precision, recall and F1 0 but consistency 1.

Over a set of samples: macro P/R/F1 are the means of the per-sample values, micro P/R/F1 come
from the summed TP/FP/FN, ``consist_mean`` is the share of consistent samples; each is
rounded to 4 decimals. The same numbers are given per scenario (the first ``-`` part of the
sample's ``scenery``), per difficulty (``diff_level.level``) and per task type (``task`` with
spaces as underscores).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping

COUNT_KEYS = ("TP", "FP", "FN", "consist")
"""A sample's counts, as upstream names them."""
GROUP_KEYS = ("scenario", "difficulty", "task")
"""The groups upstream breaks its metrics down by."""


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def tool_counts(predicted: list[str], gold: list[str]) -> dict[str, int]:
    """TP, FP, FN of the predicted tool names against the gold ones (multisets) and ``consist``."""
    pred, truth = Counter(predicted), Counter(gold)
    return {
        "TP": sum((pred & truth).values()),
        "FP": sum((pred - truth).values()),
        "FN": sum((truth - pred).values()),
        "consist": int(list(predicted) == list(gold)),
    }


def sample_scores(counts: Mapping[str, int]) -> dict[str, float]:
    """Precision, recall and F1 of one sample from its counts (0 where a denominator is 0)."""
    precision = _ratio(counts["TP"], counts["TP"] + counts["FP"])
    recall = _ratio(counts["TP"], counts["TP"] + counts["FN"])
    return {"precision": precision, "recall": recall, "f1": _ratio(2 * precision * recall, precision + recall)}


def tool_metrics(predicted: list[str], gold: list[str]) -> dict[str, float]:
    """One sample's counts and scores: ``TP``, ``FP``, ``FN``, ``consist``, ``precision``, ``recall``, ``f1``."""
    counts = tool_counts(predicted, gold)
    return {**{k: float(v) for k, v in counts.items()}, **sample_scores(counts)}


def aggregate(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Macro and micro precision/recall/F1, ``N`` and ``consist_mean`` of samples' counts."""
    rows = list(rows)
    scores = [sample_scores(r) for r in rows]
    total = {k: sum(int(r[k]) for r in rows) for k in ("TP", "FP", "FN")}
    micro = sample_scores(total)

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0

    return {
        "macro_Precision": mean([s["precision"] for s in scores]),
        "macro_Recall": mean([s["recall"] for s in scores]),
        "macro_F1": mean([s["f1"] for s in scores]),
        "micro_Precision": round(micro["precision"], 4),
        "micro_Recall": round(micro["recall"], 4),
        "micro_F1": round(micro["f1"], 4),
        "N": len(rows),
        "consist_mean": mean([float(r["consist"]) for r in rows]),
    }


def group_keys(sample: Mapping[str, Any]) -> dict[str, str] | None:
    """The scenario, difficulty and task type of a raw sample; None when it lacks ``scenery`` or
    ``diff_level.level`` (upstream's evaluation skips such samples)."""
    try:
        return {
            "scenario": str(sample["scenery"]).split("-")[0].strip(),
            "difficulty": str(sample["diff_level"]["level"]),
            "task": str(sample.get("task", "any")).replace(" ", "_"),
        }
    except (KeyError, TypeError):
        return None


def benchmark_report(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Upstream's four tables from per-sample rows (counts plus ``scenario``, ``difficulty``, ``task``).

    Returns ``{"overall": {...}, "by_scenario": {...}, "by_difficulty": {...}, "by_task": {...}}``,
    groups in the order they first appear.
    """
    rows = list(rows)
    groups: dict[str, dict[str, list[Mapping[str, Any]]]] = {
        "by_scenario": defaultdict(list), "by_difficulty": defaultdict(list), "by_task": defaultdict(list)}
    for row in rows:
        groups["by_scenario"][str(row["scenario"])].append(row)
        groups["by_difficulty"][str(row["difficulty"])].append(row)
        groups["by_task"][str(row["task"])].append(row)
    report: dict[str, Any] = {"overall": aggregate(rows)}
    for name, members in groups.items():
        report[name] = {key: aggregate(values) for key, values in members.items()}
    return report

"""FinMCP-Bench's tool-name metrics: TP (precision), TR (recall), TF1 and exact-sequence match."""

from __future__ import annotations

from collections import Counter


def tool_metrics(predicted: list[str], gold: list[str]) -> dict[str, float]:
    """Precision, recall and F1 over tool names (multisets) and exact sequence match.

    Both empty counts as a perfect match (the sample needed no tool).
    """
    if not predicted and not gold:
        return {"TP": 1.0, "TR": 1.0, "TF1": 1.0, "exact_sequence": 1.0}
    overlap = sum((Counter(predicted) & Counter(gold)).values())
    precision = overlap / len(predicted) if predicted else 0.0
    recall = overlap / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"TP": precision, "TR": recall, "TF1": f1, "exact_sequence": float(predicted == gold)}

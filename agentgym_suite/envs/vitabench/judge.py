"""Rubric judging with a caller-supplied chat model ``judge(messages) -> str``."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

JudgeFn = Callable[[list[dict[str, Any]]], str]

_INSTRUCTIONS = (
    "You grade a customer-service conversation against rubric items. For each numbered rubric, decide "
    "whether the conversation and the final records satisfy it. Reply with JSON only: "
    '{"results": [true, false, ...]} with one boolean per rubric, in order.'
)


def judge_rubrics(judge: JudgeFn, rubrics: list[str], messages: list[dict[str, Any]], final_db: dict[str, Any]) -> dict[str, Any]:
    """Ask the judge; return ``{"scored": bool, "passed": [...], "score": float, "reason": str}``."""
    if not rubrics:
        return {"scored": True, "passed": [], "score": 1.0, "reason": "no rubrics"}
    transcript = "\n".join(f"{m.get('role')}: {m.get('content') or json.dumps(m.get('tool_calls', ''), ensure_ascii=False)}" for m in messages)
    records = {k: final_db.get(k) for k in ("orders", "books", "reservations")}
    prompt = (
        "Rubrics:\n" + "\n".join(f"{i + 1}. {r}" for i, r in enumerate(rubrics))
        + "\n\nConversation:\n" + transcript[-30_000:]
        + "\n\nFinal records:\n" + json.dumps(records, ensure_ascii=False)[:20_000]
    )
    try:
        reply = judge([{"role": "system", "content": _INSTRUCTIONS}, {"role": "user", "content": prompt}])
    except Exception as exc:  # a failing judge leaves the episode unscored, not crashed
        return {"scored": False, "passed": [], "score": 0.0, "reason": f"judge failed: {type(exc).__name__}: {exc}"}
    match = re.search(r"\{.*\}", str(reply), re.DOTALL)
    try:
        results = json.loads(match.group(0))["results"] if match else None
    except (json.JSONDecodeError, KeyError, TypeError):
        results = None
    if not isinstance(results, list) or len(results) != len(rubrics):
        return {"scored": False, "passed": [], "score": 0.0, "reason": f"unparseable judge reply: {str(reply)[:200]!r}"}
    passed = [bool(r) for r in results]
    return {"scored": True, "passed": passed, "score": sum(passed) / len(passed), "reason": ""}

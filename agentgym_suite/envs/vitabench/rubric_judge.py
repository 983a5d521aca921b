"""VitaBench's rubric judge: an LLM grades the conversation against the task's rubrics in sliding windows.

As upstream's default ``trajectory`` evaluator (``vita.evaluator.evaluator_traj.TrajectoryEvaluator
.calculate_reward``): the rubrics are the state rubrics of every expected state followed by the
overall rubrics (duplicates dropped), all starting unmet; the conversation (no system prompt)
is cut into windows of 10 messages overlapping by 2; for each window the judge gets the
benchmark's sliding-window template (``prompts/sliding_window_eval_template.yaml``, shipped with
the data) filled with the task time, the instruction and the window number, plus the window's
numbered messages and the current rubric states as JSON, and answers with the updated states.
The reward is 1 when every rubric ends met (0 with no rubric met or listed wrongly), the score
the fraction met; a task without rubrics scores 1. An unreadable window reply keeps the states.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Callable

JudgeFn = Callable[[list[dict[str, Any]]], str]
"""The judge model: chat messages in, the reply text out."""

WINDOW_SIZE, WINDOW_OVERLAP = 10, 2


def rubric_list(criteria: dict[str, Any]) -> list[str]:
    """The task's rubrics: each expected state's ``state_rubrics``, then ``overall_rubrics``, without repeats."""
    seen: list[str] = []
    for state in criteria.get("expected_states") or []:
        for rubric in (state or {}).get("state_rubrics") or []:
            if rubric not in seen:
                seen.append(rubric)
    for rubric in criteria.get("overall_rubrics") or []:
        if rubric not in seen:
            seen.append(rubric)
    return seen


def sliding_windows(messages: list[Any], size: int = WINDOW_SIZE, overlap: int = WINDOW_OVERLAP) -> list[list[Any]]:
    """Windows of ``size`` messages, each starting ``size - overlap`` after the previous one."""
    if len(messages) <= size:
        return [messages]
    windows, step, start = [], size - overlap, 0
    while start < len(messages):
        windows.append(messages[start:start + size])
        if start + size >= len(messages):
            break
        start += step
    return windows


def format_window(window: list[dict[str, Any]], first_index: int) -> str:
    """``[n] role: content`` lines (``n`` counts from 1 over the whole conversation); tool calls appended as ``name(k=v)``."""
    lines = []
    for offset, message in enumerate(window):
        content = str(message.get("content") or "")
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function", call) if isinstance(call, dict) else {}
            arguments = function.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except (ValueError, RecursionError):  # not JSON, a number over the digit limit, absurd nesting
                    pass
            args = ", ".join(f"{k}={v!r}" for k, v in arguments.items()) if isinstance(arguments, dict) else str(arguments)
            calls.append(f"{function.get('name', 'unknown_tool')}({args})")
        if calls:
            content = f"{content} {'.'.join(calls)}".strip()
        if content:
            lines.append(f"[{first_index + offset + 1}] {message.get('role')}: {content}")
    return "\n".join(lines)


def weekday(time: str) -> str:
    """The English weekday of a ``YYYY-MM-DD ...`` time, or ``""``."""
    try:
        return datetime.strptime(str(time)[:10], "%Y-%m-%d").strftime("%A")
    except ValueError:
        return ""


def parse_states(reply: str) -> list[dict[str, Any]] | None:
    """The list of rubric states in a judge reply (a JSON array, possibly in a code fence), or None."""
    text = str(reply)
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):  # a judge reply nested too deep for the parser is unreadable
            continue
        if isinstance(data, dict):
            data = [data]
        if isinstance(data, list) and all(isinstance(item, dict) for item in data):
            return data
    return None


def _met(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return default


def judge_trajectory(judge: JudgeFn, template: str, criteria: dict[str, Any], messages: list[dict[str, Any]],
                     instruction: str, time: str = "") -> dict[str, Any]:
    """Grade one finished conversation; see the module docstring.

    Returns ``{"scored", "reward", "score", "rubrics", "passed", "justifications", "windows", "reason"}``;
    ``scored`` is False only when the judge itself failed (an exception).
    """
    rubrics = rubric_list(criteria)
    if not rubrics:
        return {"scored": True, "reward": 1.0, "score": 1.0, "rubrics": [], "passed": [], "justifications": [],
                "windows": 0, "reason": "no rubric to evaluate"}
    states = {f"rubric_{i}": {"rubric": r, "justification": "Not evaluated yet", "meetExpectation": False} for i, r in enumerate(rubrics)}
    conversation = [m for m in messages if m.get("role") != "system"]
    windows = sliding_windows(conversation)
    env_info = {"system_time": f"{time} {weekday(time)}".strip() if time else "", "database": []}
    unreadable = 0
    for number, window in enumerate(windows, start=1):
        system = template.format(env_info=env_info, user_instruction=instruction, window_idx=number, total_windows=len(windows))
        current = [{"rubric_idx": key, **state} for key, state in states.items()]
        user = (f"\n# Input\n<window_content>\n{format_window(window, (number - 1) * (WINDOW_SIZE - WINDOW_OVERLAP))}\n"
                f"</window_content>\n\n<current_rubrics>\n{json.dumps(current, ensure_ascii=False, indent=2)}\n</current_rubrics>\n")
        try:
            reply = judge([{"role": "system", "content": system}, {"role": "user", "content": user}])
        except Exception as exc:  # a failing judge leaves the episode unscored, never a crash
            return {"scored": False, "reward": 0.0, "score": 0.0, "rubrics": rubrics, "passed": [], "justifications": [],
                    "windows": number, "reason": f"judge failed: {type(exc).__name__}: {exc}"}
        parsed = parse_states(reply)
        if parsed is None:
            unreadable += 1
            continue
        for item in parsed:
            key = item.get("rubric_idx")
            if key in states:
                states[key]["justification"] = str(item.get("justification", "No justification provided"))
                states[key]["meetExpectation"] = _met(item.get("meetExpectation"), states[key]["meetExpectation"])
    passed = [bool(state["meetExpectation"]) for state in states.values()]
    return {"scored": True, "reward": float(all(passed)), "score": sum(passed) / len(passed), "rubrics": rubrics,
            "passed": passed, "justifications": [s["justification"] for s in states.values()], "windows": len(windows),
            "reason": f"{unreadable} of {len(windows)} judge replies could not be read" if unreadable else ""}


__all__ = ["JudgeFn", "WINDOW_OVERLAP", "WINDOW_SIZE", "format_window", "judge_trajectory", "parse_states", "rubric_list",
           "sliding_windows", "weekday"]

"""Model answers to FinMCP samples, as turn plans and in DianJin-TIR's prediction format.

The samples are the suite's invented fixtures (:mod:`agentgym_suite.envs.finmcp.fixtures`) plus
one with no recorded tool call (upstream's empty case). Each case is one sample answered one
way: the recorded calls (gold), a step dropped, an extra call, a wrong tool, the steps out of
order, no call at all, more than 20 calls in a turn, a call whose arguments are not JSON (an
inference error upstream). :func:`prediction_samples` writes each case as upstream's inference
saves it: the sample with ``messages_pred`` (or ``error: true``), under its own id.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from agentgym_suite.envs.finmcp.fixtures import fixture_samples

Call = tuple[str, dict[str, Any]]
TurnPlan = list[list[Call] | str]
"""One user turn: messages of calls (lists) and, last, the text answer (a string). A string
that is not a final answer but starts with ``MALFORMED`` stands for a call block that is not JSON."""
MALFORMED = "MALFORMED"


@dataclass(frozen=True)
class Case:
    """One sample answered one way."""

    case_id: str
    base_id: int
    turns: list[TurnPlan]
    scenery: str | None = None


def _empty_sample() -> dict[str, Any]:
    question = "What does a money market fund invest in?"
    answer = "Short-term, high-quality debt such as treasury bills and bank deposits."
    return {
        "id": 900, "task": "single step", "first-class": "fund", "sub-class": "knowledge",
        "scenery": "education-fund-knowledge", "diff_level": {"turns": 1, "tool_number": 0, "level": "easy"},
        "tool_list": [], "question": question, "answer": answer,
        "messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}],
        "annotation": {"final_score": 5, "tool_list_changed": False, "time_sensitive": False, "remark": "synthetic fixture"},
    }


def base_samples() -> dict[int, dict[str, Any]]:
    """The fixture samples and the empty one, by id."""
    samples = {s["id"]: s for s in fixture_samples()}
    samples[900] = _empty_sample()
    return samples


def gold_turns(sample: dict[str, Any]) -> list[TurnPlan]:
    """The recorded answer of a sample as turn plans."""
    turns: list[TurnPlan] = []
    for message in sample["messages"]:
        if message["role"] == "user":
            turns.append([])
        elif message["role"] == "assistant" and turns:
            calls = message.get("tool_calls") or []
            if calls:
                turns[-1].append([(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls])
            else:
                turns[-1].append(str(message.get("content") or "Done."))
    return turns


def cases() -> list[Case]:
    """Every conformance case, gold first for each sample."""
    samples = base_samples()
    out: list[Case] = []
    for base_id, sample in samples.items():
        gold = gold_turns(sample)
        out.append(Case(f"{base_id}-gold", base_id, gold))
        out.append(Case(f"{base_id}-no_call", base_id, [["I cannot look that up."] for _ in gold]))
    news = ("SearchFinancialNews", {"keyword": "bonds"})
    out += [
        Case("201-step_dropped", 201, [[step for i, step in enumerate(gold_turns(samples[201])[0]) if i != 1]]),
        Case("201-out_of_order", 201, [list(reversed(gold_turns(samples[201])[0][:-1])) + ["Done."]]),
        Case("202-extra_call", 202, [[gold_turns(samples[202])[0][0] + [news], "Done."]], scenery="markets-news-check"),
        Case("2-wrong_tool", 2, [[[news], "Here are funds."]], scenery="markets-fund-search"),
        Case("602-turn2_missed", 602, [gold_turns(samples[602])[0], ["No announcements."]]),
        Case("602-turn1_extra", 602, [[[news]] + gold_turns(samples[602])[0], gold_turns(samples[602])[1]]),
        Case("900-needless_call", 900, [[[news], "Money market funds hold short-term debt."]]),
        Case("1-over_limit", 1, [[[news] * 7, [news] * 7, [news] * 7, [("SearchFunds", {"keyword": "x"})], "Done."]]),
        Case("1-malformed", 1, [[MALFORMED, "Done."]]),
    ]
    return out


def _assistant(calls: list[Call], prefix: str) -> dict[str, Any]:
    return {"reasoning_content": "", "content": "", "role": "assistant", "tool_calls": [
        {"id": f"{prefix}_{i}", "function": {"arguments": json.dumps(args, ensure_ascii=False), "name": name},
         "type": "function", "index": i} for i, (name, args) in enumerate(calls)]}


def prediction_sample(case: Case, case_number: int) -> dict[str, Any]:
    """The case as upstream's inference saves it (``messages_pred``, or ``error`` when it raised)."""
    sample = copy.deepcopy(base_samples()[case.base_id])
    sample["id"] = case_number
    if case.scenery:
        sample["scenery"] = case.scenery
    if any(step == MALFORMED for turn in case.turns for step in turn):
        # a tool call whose arguments are not JSON makes call_with_messages raise
        return {"error": True, "error_message": "Expecting value: line 1 column 1 (char 0)", "messages_pred": []}
    users = [m for m in sample["messages"] if m["role"] == "user"]
    predicted: list[dict[str, Any]] = []
    for number, (user, turn) in enumerate(zip(users, case.turns)):
        predicted.append(copy.deepcopy(user))
        executed = 0
        for index, step in enumerate(turn):
            if isinstance(step, str):
                predicted.append({"reasoning_content": "", "content": step, "role": "assistant", "tool_calls": None})
                break
            predicted.append(_assistant(step, f"call_{number}_{index}"))
            if executed > 20:  # upstream's loop stops before executing it; the turn ends here
                break
            executed += len(step)
            predicted += [{"content": "{}", "role": "tool", "tool_call_id": f"call_{number}_{index}_{i}"} for i in range(len(step))]
    sample["messages_pred"] = predicted
    return sample


def prediction_samples() -> list[dict[str, Any]]:
    """Every case in upstream's prediction format, ids 1000, 1001, ..."""
    return [prediction_sample(case, 1000 + number) for number, case in enumerate(cases())]


def env_samples() -> list[dict[str, Any]]:
    """The samples the env plays: one per case, same ids and groups, without predictions."""
    out = []
    for number, case in enumerate(cases()):
        sample = copy.deepcopy(base_samples()[case.base_id])
        sample["id"] = 1000 + number
        if case.scenery:
            sample["scenery"] = case.scenery
        out.append(sample)
    return out

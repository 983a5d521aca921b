"""A handful of invented FinMCP samples in the official format, for tests and demos.

The fund codes, names and figures are made up. ``write_fixtures(directory)`` writes them as
``fixtures.json``; ``python -m agentgym_suite.envs.finmcp.fixtures DIR`` does the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _call(call_id: str, name: str, arguments: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "index": index,
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def _tool(call_id: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content, ensure_ascii=False)}


def _sample(sample_id: int, task: str, question: str, answer: str, tool_list: list, messages: list, level: str = "easy") -> dict[str, Any]:
    turns = sum(1 for m in messages if m["role"] == "user")
    n_calls = sum(len(m.get("tool_calls") or []) for m in messages)
    return {
        "id": sample_id, "task": task, "first-class": "fund", "sub-class": "query", "scenery": "wealth-management-fund-query",
        "diff_level": {"turns": turns, "tool_number": n_calls, "level": level},
        "tool_list": tool_list, "question": question, "answer": answer, "messages": messages,
        "annotation": {"final_score": 5, "tool_list_changed": False, "time_sensitive": False, "remark": "synthetic fixture"},
    }


def fixture_samples() -> list[dict[str, Any]]:
    """Five invented samples: two single step, two multi step (one with parallel calls), one multi turn."""
    q1 = "Find recent news about the semiconductor sector."
    s1 = _sample(1, "single step", q1, "Two recent items: chip exports rose and a foundry expanded capacity.", [["SearchFinancialNews"]], [
        {"role": "user", "content": q1},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "SearchFinancialNews", {"keyword": "semiconductor"})]},
        _tool("c1", {"news": [{"title": "Chip exports rose 8% in May"}, {"title": "Foundry X expands capacity"}]}),
        {"role": "assistant", "content": "Two recent items: chip exports rose and a foundry expanded capacity."},
    ])
    q2 = "Which bond funds have low risk?"
    s2 = _sample(2, "single step", q2, "Steady Bond A (F0001) and Calm Income (F0002) are low risk.", [["SearchFunds"]], [
        {"role": "user", "content": q2},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "SearchFunds", {"keyword": "bond", "risk_level": "low"})]},
        _tool("c1", {"funds": [{"code": "F0001", "name": "Steady Bond A"}, {"code": "F0002", "name": "Calm Income"}]}),
        {"role": "assistant", "content": "Steady Bond A (F0001) and Calm Income (F0002) are low risk."},
    ])
    q3 = "How are my holdings allocated, and what did my largest fund earn yesterday?"
    s3 = _sample(201, "multi step", q3, "60% equity, 40% bonds; Growth Plus earned 12.30 yesterday.", [["GetUserAssetView"], ["GetStrategyAssetClassAnalysis"], ["GetFundLatestProfit"]], [
        {"role": "user", "content": q3},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "GetUserAssetView", {"user_id": "U42"})]},
        _tool("c1", {"holdings": [{"code": "F0100", "name": "Growth Plus", "amount": 6000}, {"code": "F0001", "amount": 4000}], "strategy_id": "ST7"}),
        {"role": "assistant", "content": "", "tool_calls": [_call("c2", "GetStrategyAssetClassAnalysis", {"strategy_id": "ST7"})]},
        _tool("c2", {"equity": 0.6, "bond": 0.4}),
        {"role": "assistant", "content": "", "tool_calls": [_call("c3", "GetFundLatestProfit", {"fund_code": "F0100", "user_id": "U42"})]},
        _tool("c3", {"fund_code": "F0100", "profit": 12.3, "date": "2025-06-30"}),
        {"role": "assistant", "content": "60% equity, 40% bonds; Growth Plus earned 12.30 yesterday."},
    ], level="medium")
    q4 = "Compare the risk of strategies ST7 and ST9 and show F0100's latest net value."
    s4 = _sample(202, "multi step", q4, "ST7 is medium risk, ST9 low; F0100 NAV is 1.234.", [["BatchGetStrategyRiskInfo", "BatchGetFundNavHistory"]], [
        {"role": "user", "content": q4},
        {"role": "assistant", "content": "", "tool_calls": [
            _call("c1", "BatchGetStrategyRiskInfo", {"strategy_ids": ["ST7", "ST9"]}, 0),
            _call("c2", "BatchGetFundNavHistory", {"fund_codes": ["F0100"], "days": 1}, 1)]},
        _tool("c1", {"ST7": "medium", "ST9": "low"}),
        _tool("c2", {"F0100": [{"date": "2025-06-30", "nav": 1.234}]}),
        {"role": "assistant", "content": "ST7 is medium risk, ST9 low; F0100 NAV is 1.234."},
    ], level="medium")
    q5a, q5b = "What are the purchase fees of fund F0001?", "And what did it announce recently?"
    s5 = _sample(602, "multi turn", q5a, "No recent announcements besides the quarterly report.", ["BatchGetFundTradeRules", "GetFundAnnouncements"], [
        {"role": "user", "content": q5a},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "BatchGetFundTradeRules", {"fund_codes": ["F0001"]})]},
        _tool("c1", {"F0001": {"purchase_fee": "0.08%", "redeem_fee": "0.5% under 7 days"}}),
        {"role": "assistant", "content": "The purchase fee of F0001 is 0.08%."},
        {"role": "user", "content": q5b},
        {"role": "assistant", "content": "", "tool_calls": [_call("c2", "GetFundAnnouncements", {"fund_code": "F0001"})]},
        _tool("c2", {"announcements": [{"title": "Q2 report", "date": "2025-07-15"}]}),
        {"role": "assistant", "content": "No recent announcements besides the quarterly report."},
    ], level="hard")
    return [s1, s2, s3, s4, s5]


def write_fixtures(directory: str | Path) -> Path:
    """Write the fixture samples to ``directory/fixtures.json`` and return the file path."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    path = root / "fixtures.json"
    path.write_text(json.dumps(fixture_samples(), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_fixtures(sys.argv[1] if len(sys.argv) > 1 else "."))

"""fit_messages: the oldest exchanges leave first; the head (system prompt, task) and the latest stay."""

from __future__ import annotations

from agentgym_suite.rollout.context import fit_messages, split_exchanges

HEAD = [{"role": "system", "content": "rules " * 20}, {"role": "user", "content": "task: find the key"}]


def _exchange(k: int) -> list[dict]:
    call = {"id": f"c{k}", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"result {k} " * 10}]


def _count(messages: list[dict]) -> int:
    return sum(len(str(m.get("content") or "")) + 10 for m in messages)


def test_oldest_exchanges_go_first_and_calls_keep_their_results() -> None:
    messages = HEAD + [m for k in range(5) for m in _exchange(k)]
    head, exchanges = split_exchanges(messages)
    assert head == HEAD and len(exchanges) == 5 and all(len(e) == 2 for e in exchanges)
    assert fit_messages(messages, _count(messages), _count) == (messages, [])
    budget = _count(HEAD) + 2 * _count(_exchange(0))
    kept, trimmed = fit_messages(messages, budget, _count)
    assert trimmed == [0, 1, 2] and kept == HEAD + _exchange(3) + _exchange(4)
    kept, trimmed = fit_messages(messages, 1, _count)  # nothing fits: the head and the latest exchange still go
    assert trimmed == [0, 1, 2, 3] and kept == HEAD + _exchange(4)

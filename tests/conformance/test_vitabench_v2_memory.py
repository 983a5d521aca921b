"""VitaBench 2.0 memories hold what upstream's hold after the same interactions.

``vitabench_v2/memory.json`` was produced by upstream's memories (``regenerate_memory.py`` names
the repository and commit) over the fixture users' interactions: the rendering of each update,
the full-context memory, and the rewrite memory with no model, with a model (its reply replaces
the memory; each call's request and token budget) and with a failing model (append fallback).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.envs.vitabench.memory import (REWRITE_BUDGET, FullContextMemory, RewriteMemory, interaction_lines,
                                                  model_summariser)
from tests.envs.vitabench_v2_fixture import tasks

EXPECTED = json.loads((Path(__file__).parent / "vitabench_v2" / "memory.json").read_text(encoding="utf-8"))["users"]
USERS = {user["id"]: user for user in tasks()}


@pytest.mark.parametrize("user_id", sorted(EXPECTED))
def test_memories_equal_upstream(user_id: str) -> None:
    expected = EXPECTED[user_id]
    calls: list[dict] = []

    def chat(messages: list[dict]) -> str:
        calls.append({"roles": [m["role"] for m in messages], "content": messages[1]["content"]})
        return f"  summary {len(calls)}  "

    def failing(messages: list[dict]) -> str:
        raise RuntimeError("model down")

    memories = {"full_context": FullContextMemory(), "rewrite_no_model": RewriteMemory(),
                "rewrite_model": RewriteMemory(model_summariser(chat)), "rewrite_failing": RewriteMemory(model_summariser(failing))}
    seen_new: list[str] = []
    for n, subtask in enumerate(USERS[user_id]["subtasks"]):
        interactions = subtask["interactions"]
        assert "\n".join(interaction_lines(interactions)) == expected["formatted"][n]
        before = memories["rewrite_model"].text
        for name, memory in memories.items():
            memory.update(interactions)
            assert memory.read() == expected[name][n], (name, n)
        if interactions:
            seen_new.append((before, expected["formatted"][n]))
    assert len(calls) == len(expected["rewrite_calls"])
    for ours, theirs, (current, new) in zip(calls, expected["rewrite_calls"], seen_new):
        assert ours["roles"] == theirs["roles"]
        assert (bool(current) and current in ours["content"]) == theirs["has_current"]
        assert (new in ours["content"]) == theirs["has_new"]
    assert all(call["max_tokens"] == REWRITE_BUDGET for call in expected["rewrite_calls"])

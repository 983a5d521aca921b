"""Requests in records: full the first time, by hash after, and rebuilt exactly."""

from __future__ import annotations

import json

import pytest

from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.rollout.request_log import REF_KEY, RequestLog, expand_requests

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def test_compaction_round_trips_through_a_record() -> None:
    system, task = {"role": "system", "content": "long rules " * 50}, {"role": "user", "content": "the task"}
    requests = [
        {"model": "m", "seed": 1, "messages": [system, task], "tools": TOOLS},
        {"model": "m", "seed": 2, "messages": [system, task, {"role": "assistant", "content": "a"},
                                               {"role": "user", "content": "o"}], "tools": TOOLS},
    ]
    log = RequestLog()
    turns = [Turn(index=i, prompt_text="", completion_text="", request=log.compact(r)) for i, r in enumerate(requests)]
    second = turns[1].request
    assert second["messages"][:2] == [{REF_KEY: second["messages"][0][REF_KEY]}, {REF_KEY: second["messages"][1][REF_KEY]}]
    assert set(second["tools"]) == {REF_KEY} and second["messages"][2] == {"role": "assistant", "content": "a"}
    record = Trajectory.from_dict(json.loads(json.dumps(Trajectory(task_id="t", turns=turns).to_dict())))
    assert expand_requests(record.turns) == requests
    assert len(json.dumps(second)) < len(json.dumps(requests[1])) / 3
    with pytest.raises(ValueError, match="no earlier turn"):
        expand_requests(record.turns[1:])

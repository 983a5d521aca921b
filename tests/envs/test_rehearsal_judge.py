"""The checklist judge inside a rehearsed episode: sampled as released, its schema sent, and an
unusable verdict reported and ending the episode after its turn."""

from __future__ import annotations

import json
from typing import Any

from agentgym_suite.envs.checklist_tools.fixtures import write_fixtures
from agentgym_suite.methods.envace import RehearsalEnv, format_execution_result
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.envs.shared.checklists import VERDICT_SCHEMA
from agentgym_suite.llm.base import Sample

REPLY = "Yes, sunny and 21 degrees."
CALL = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'


class RecordingJudge:
    """A judge backend that answers every request with ``reply`` and keeps the sampling it was given."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.params: list[Any] = []

    def generate(self, prompts: Any, params: Any, tools: Any = None) -> list[list[Sample]]:
        self.params.append(params)
        return [[Sample(text=self.reply, has_token_ids=False)] for _ in prompts]


def _env(tmp_path: Any, judge: Any, **kwargs: Any) -> RehearsalEnv:
    world = ScriptedBackend(lambda name, arguments: format_execution_result({"city": "Rome", "celsius": 21}))
    env = RehearsalEnv(base_env="ChecklistTools-v0", base_env_kwargs={"data_path": str(write_fixtures(tmp_path))},
                       world_model=world, judge=judge, **kwargs)
    env.reset(options={"task_id": "plan-2"})
    return env


def test_the_judge_is_sampled_as_released_with_the_verdict_schema(tmp_path: Any) -> None:
    verdict = {k: "x" for k in VERDICT_SCHEMA["required"]} | {"answer": True}
    judge = RecordingJudge(json.dumps(verdict))
    env = _env(tmp_path, judge)
    env.step(CALL)
    _, reward, terminated, _, info = env.step(REPLY)
    assert not terminated and reward == 0.5 and info["checklist_judge_invalid"] == []  # turn 1 of 2 met in full
    params = judge.params[0]
    assert (params.temperature, params.top_p, params.max_new_tokens) == (0.6, 0.8, 6000)
    assert json.loads(params.json_schema) == VERDICT_SCHEMA and params.json_schema_name == "evaluation_verdict"
    custom = RecordingJudge(json.dumps(verdict))
    env = _env(tmp_path, custom, judge_temperature=0.0, judge_max_new_tokens=512)
    env.step(REPLY)
    assert (custom.params[0].temperature, custom.params[0].max_new_tokens) == (0.0, 512)


def test_an_unusable_verdict_is_reported_and_ends_the_episode_after_its_turn(tmp_path: Any) -> None:
    judge = RecordingJudge("The assistant did well.")
    env = _env(tmp_path, judge)
    env.step(CALL)
    _, reward, terminated, _, info = env.step(REPLY)
    assert terminated and reward == 0.0 and not info["won"]  # as the released interaction terminates
    assert info["checklist_judge_invalid"] and "not a JSON verdict" in info["checklist_judge_invalid"][0]
    assert len(judge.params) == 5 * len(info["checklist_judge_invalid"])  # each standard asked 5 times


def test_a_json_schema_that_is_not_a_json_object_is_refused() -> None:
    import pytest

    from agentgym_suite.llm.base import SamplingParams

    for bad in ("not json", "[1, 2]"):
        with pytest.raises(ValueError, match="json_schema"):
            SamplingParams(json_schema=bad)
    assert json.loads(SamplingParams(json_schema=json.dumps(VERDICT_SCHEMA)).json_schema) == VERDICT_SCHEMA

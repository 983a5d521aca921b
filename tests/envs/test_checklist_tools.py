"""ChecklistTools-v0: the published checklist training format, its recording, and judge-scored rehearsal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.checklist_tools import ChecklistToolsEnv, load_checklist_samples
from agentgym_suite.envs.checklist_tools.dataset import parse_item
from agentgym_suite.envs.checklist_tools.fixtures import items, snippet_judge
from agentgym_suite.methods.envace import RehearsalEnv, format_execution_result
from agentgym_suite.envs.shared.checklists import ChecklistJudge
from agentgym_suite.methods.envace.scripted import ScriptedBackend

from .oracle import step_through


@pytest.fixture
def data(tmp_path: Path) -> str:
    return str(ChecklistToolsEnv.fixture_kwargs(tmp_path)["data_path"])


def test_published_items_load_with_tools_turns_checklists_and_recordings(data: str) -> None:
    samples = load_checklist_samples(data)
    assert list(samples) == ["weather-1", "plan-2"]
    plan = samples["plan-2"]
    assert len(plan.user_turns) == 2 and len(plan.checklists[0]) == 2
    assert [r["name"] for r in plan.recorded] == ["get_weather", "add_event"]
    assert plan.recorded[1]["result"] == {"event_id": "ev-1", "title": "picnic"}


def test_bad_items_get_clear_errors() -> None:
    good = items()[0]
    with pytest.raises(ValueError, match="extra_info"):
        parse_item({"messages": []}, "x")
    broken = json.loads(json.dumps(good))
    broken["extra_info"]["interaction_kwargs"]["checklist_list"] = []
    with pytest.raises(ValueError, match="checklist_list"):
        parse_item(broken, "x")
    broken = json.loads(json.dumps(good))
    broken["extra_info"]["tools"] = "{}"
    with pytest.raises(ValueError, match="tools"):
        parse_item(broken, "x")


def test_recording_replays_and_the_judge_scores_the_oracle(data: str) -> None:
    env = ChecklistToolsEnv(data_path=data, judge=snippet_judge)
    env.reset(options={"task_id": "plan-2"})
    reward, _, won, _ = step_through(env, env.oracle())
    assert won and reward == pytest.approx(1.0)
    env.reset(options={"task_id": "plan-2"})
    obs, *_ = env.step('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>')
    assert "no recorded result" in obs


def test_rehearsal_on_checklist_data_is_scored_per_turn_by_the_fixed_judge(data: str) -> None:
    def recorded(name: str, arguments: dict[str, Any]) -> str:
        for r in load_checklist_samples(data)["plan-2"].recorded:
            if r["name"] == name:
                return format_execution_result(r["result"])
        return format_execution_result({"ok": True})
    env = RehearsalEnv(base_env="ChecklistTools-v0", base_env_kwargs={"data_path": data},
                       world_model=ScriptedBackend(recorded), judge=snippet_judge)
    env.reset(options={"task_id": "plan-2"})
    assert env.reward_mode == "checklist"
    assert [e["name"] for e in env.unwrapped._examples] == ["get_weather", "add_event"]
    reward, _, won, info = step_through(env, env.oracle())
    assert won and reward == pytest.approx(1.0) and info["checklist_turn_scores"] == [1.0, 1.0]
    env.reset(options={"task_id": "plan-2"})
    reward, _, won, info = step_through(env, ["I cannot help with that."])
    assert not won and info["checklist_turn_scores"] == [0.0] and reward == 0.0  # required standard unmet: stops


def test_standards_without_a_check_need_a_judge(data: str) -> None:
    env = RehearsalEnv(base_env="ChecklistTools-v0", base_env_kwargs={"data_path": data}, world_model="tiny")
    with pytest.raises(ValueError, match="judge="):
        env.reset(options={"task_id": "weather-1"})


def test_tiny_model_as_the_fixed_judge_gives_a_bounded_score(data: str) -> None:
    env = RehearsalEnv(base_env="ChecklistTools-v0", base_env_kwargs={"data_path": data},
                       world_model=ScriptedBackend(lambda n, a: format_execution_result({"celsius": 4})),
                       judge=ChecklistJudge("tiny", max_new_tokens=8))
    env.reset(options={"task_id": "weather-1"})
    reward, _, _, info = step_through(env, env.oracle())
    assert 0.0 <= reward <= 1.0 and len(info["checklist_turn_scores"]) == 1
    assert env.unwrapped._checklist_judge.calls >= 2  # one verdict per standard and step

"""EnvACE's trajectory files of the earlier layout load with their world-model generations.

Before the generic ``role_generations`` record, a rehearsal turn kept the world model's generations
under ``simulator_generations`` (flat ``SimulatorGeneration`` dicts). The file below is written in
that layout; the loader, which names no method, finds EnvACE's upgrade through the
``agentgym_suite.record_upgrades`` entry points the method package declares.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.core import plugins
from agentgym_suite.methods.envace.generation import SimulatorGeneration, simulator_generations
from agentgym_suite.methods.envace.record_upgrade import upgrade_record
from agentgym_suite.rollout import Trajectory, Turn, read_trajectories
from agentgym_suite.rollout.record_upgrades import record_upgrades

GENERATIONS = [
    SimulatorGeneration(tool_name="get_weather", arguments={"city": "Oslo"}, call_id="c1", turn=1, index=0,
                        prompt_messages=[{"role": "system", "content": "You are the environment."}],
                        prompt_text="<sys>You are the environment.</sys>", prompt_ids=[5, 6, 7],
                        completion_ids=[8, 9], logprobs=[-0.25, -0.5],
                        completion_text='<execution_result>{"temp": 3}</execution_result>', has_token_ids=True,
                        contract_valid=True, result={"temp": 3}),
    SimulatorGeneration(tool_name="no_such_tool", turn=1, index=1, prompt_ids=[5], completion_ids=[4],
                        logprobs=[-1.0], has_token_ids=True, contract_valid=True, result={"error": "unknown tool"},
                        expected_error="TOOL_NOT_AVAILABLE", validation_reward=1.0),
]


def _old_file(tmp_path: Path) -> Path:
    """A trajectory line as the rollout records wrote it when a turn held ``simulator_generations``."""
    record = Trajectory(task_id="weather-3", env_id="EnvACE-Rehearsal-v0", turns=[
        Turn(index=0, prompt_text="p", completion_text='<tool_call>{"name": "get_weather"}</tool_call>'),
        Turn(index=1, prompt_text="p2", completion_text="It is 3 degrees."),
    ]).to_dict()
    for turn in record["turns"]:
        del turn["role_generations"]
    record["turns"][0]["simulator_generations"] = [g.to_dict() for g in GENERATIONS]
    path = tmp_path / "trajectories.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_an_old_file_loads_with_its_generations_intact(tmp_path: Path) -> None:
    (back,) = read_trajectories(_old_file(tmp_path))
    first, second = back.turns
    assert [g.role for g in first.role_generations] == ["simulator", "simulator"] and second.role_generations == []
    assert [SimulatorGeneration.from_role_generation(g) for g in first.role_generations] == GENERATIONS
    assert first.role_generations[0].trainable and first.role_generations[1].reward == 1.0
    assert simulator_generations({"role_generations": [g.to_dict() for g in first.role_generations]}) == GENERATIONS
    assert Trajectory.from_dict(back.to_dict()) == back  # and it writes back in the current layout


def test_the_upgrade_is_found_through_the_extension_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    declared = [u for u in record_upgrades() if u.upgrade is upgrade_record]
    assert len(declared) == 1 and "agentgym_suite.methods.envace" in declared[0].origin
    assert any(p.obj is upgrade_record for p in plugins.suite_methods(plugins.RECORD_UPGRADES_GROUP))
    # with the method packages' declarations withheld, the loader knows nothing of the old key
    monkeypatch.setattr(plugins, "suite_methods", lambda group: ())
    monkeypatch.syspath_prepend(str(tmp_path))  # a new sys.path: the declared upgrades are read again
    (back,) = read_trajectories(_old_file(tmp_path))
    assert back.turns[0].role_generations == []


def test_a_turn_with_both_layouts_keeps_all_and_a_bad_value_is_reported() -> None:
    current = GENERATIONS[0].as_role_generation().to_dict()
    record = {"task_id": "t", "turns": [{"index": 0, "role_generations": [current],
                                         "simulator_generations": [GENERATIONS[1].to_dict()]}]}
    (turn,) = upgrade_record(record)["turns"]
    assert "simulator_generations" not in turn and len(turn["role_generations"]) == 2
    assert record["turns"][0]["simulator_generations"]  # the caller's dict is left as it was
    assert upgrade_record({"task_id": "t", "turns": [{"index": 0}]}) == {"task_id": "t", "turns": [{"index": 0}]}
    with pytest.raises(ValueError, match="record upgrade 'envace' .*must be a list"):
        Trajectory.from_dict({"task_id": "t", "turns": [{"index": 0, "simulator_generations": "oops"}]})

"""SkillRise evaluation: sequences and repeated attempts through ``agentgym eval --skillrise``, the skill
document carried along the sequence, and the per-position metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.skillrise.sweep import (
    SkillRiseSpec,
    parse_spec,
    position_results,
    skillrise_report,
)
from agentgym_suite.evaluation.sweep import run_sweep
from evaluation.fake_env import register_fake_env


class LearnsFromItsSkills:
    """Solves a task only when its skill document says how: fails the first task of a trial, writes
    the lesson when curating, and then solves every later task by following it."""

    name = "learns-from-skills"

    def __init__(self) -> None:
        self.env = None
        self.documents_seen: list[str] = []

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        self.env = env

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if info.get("role") == "curate":
            return "<skill>## Workflow\nopen the box, then take the key</skill>"
        document = str(info.get("skill_document") or "")
        self.documents_seen.append(document)
        if "open the box" in document and document in observation:  # the document is in the prompt it sees
            return self.env.unwrapped.oracle()[0]
        return "wait"


def run_skillrise_eval(env_id: str, agent: Any, spec: SkillRiseSpec, **kwargs: Any) -> Any:
    """The skillrise sweep's report for ``spec`` (its typed result)."""
    return run_sweep(env_id, agent, "skillrise", args=f"{spec.mode}:{spec.k}:{spec.turns_per_task}", **kwargs).outcome.value


def test_parse_spec() -> None:
    assert parse_spec("sequence:3") == SkillRiseSpec("sequence", 3, 10)
    assert parse_spec("repeat:4:20") == SkillRiseSpec("repeat", 4, 20)
    for bad in ["sequence", "loop:3", "sequence:0", "sequence:x", "repeat:2:3:4"]:
        with pytest.raises(ValueError, match="sequence:K or repeat:K"):
            parse_spec(bad)


def test_sequence_carries_the_skill_document_and_reports_each_position(tmp_path: Path) -> None:
    env_id = register_fake_env()
    agent = LearnsFromItsSkills()
    report = run_skillrise_eval(env_id, agent, SkillRiseSpec("sequence", 3, 3), out_dir=tmp_path, episodes=4,
                                progress=False)
    assert report.trials == 4 and report.left_out == 0
    assert report.pass_at_position == [0.0, 1.0, 1.0]
    assert [e["last_task"] for e in report.success_by_length] == [0.0, 1.0, 1.0]
    assert [e["mean_success"] for e in report.success_by_length] == pytest.approx([0.0, 0.5, 2 / 3])
    assert agent.documents_seen.count("") == 4 * 3  # 3 solve turns at position 0 of each trial, with no document yet
    written = json.loads((tmp_path / "skillrise.json").read_text())
    assert written["pass_at_position"] == [0.0, 1.0, 1.0] and written["mode"] == "sequence"
    for record in report.result.records:
        tasks = [t.info["finished_task_id"] for t in record.turns if "finished_task_id" in t.info]
        assert len(tasks) == 3 and len(set(tasks)) == 3


def test_repeat_attempts_one_task(tmp_path: Path) -> None:
    env_id = register_fake_env()
    report = run_skillrise_eval(env_id, LearnsFromItsSkills(), SkillRiseSpec("repeat", 2, 3), out_dir=tmp_path,
                                episodes=2, progress=False)
    assert report.pass_at_position == [0.0, 1.0]
    assert [e["solved_within"] for e in report.success_by_length] == [0.0, 1.0]
    for record in report.result.records:
        tasks = {t.info["finished_task_id"] for t in record.turns if "finished_task_id" in t.info}
        assert tasks == {record.task_id}


def test_crashed_trials_are_left_out_and_unreached_tasks_count_as_failed(tmp_path: Path) -> None:
    from agentgym_suite.rollout import Trajectory
    from agentgym_suite.rollout.records import Turn

    done = Trajectory(task_id="a", turns=[Turn(0, "", "x", info={"finished_position": 0, "finished_won": True})])
    crashed = Trajectory(task_id="b", error="boom", error_stage="step")
    assert position_results(done, 3) == [True, False, False]
    report = skillrise_report([done, crashed], SkillRiseSpec("sequence", 3), tmp_path)
    assert report.trials == 1 and report.left_out == 1 and report.pass_at_position == [1.0, 0.0, 0.0]


def test_cli_skillrise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    env_id = register_fake_env()
    code = main(["eval", env_id, "--agent", "oracle", "--skillrise", "sequence:2", "--episodes", "2",
                 "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Pass@1 of task L" in out and "skillrise.json" in out
    assert json.loads((tmp_path / "skillrise.json").read_text())["pass_at_position"] == [1.0, 1.0]
    assert main(["eval", env_id, "--skillrise", "sometimes", "--out", str(tmp_path / "bad")]) == 2

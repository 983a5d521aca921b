"""``agentgym demo`` end to end on the tiny model: every stage runs and the report holds
numbers read back from the run's own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    code = main(["demo", "--model", "tiny", "--steps", "1", "--eval-episodes", "3", "--alfworld-episodes", "1",
                 "--group-size", "2", "--tasks-per-step", "1", "--max-turns", "2", "--max-new-tokens", "6",
                 "--out", str(out)])
    assert code == 0
    return out


def test_report_lists_every_stage_with_its_command(demo_dir: Path) -> None:
    report = (demo_dir / "report.md").read_text()
    for label in ("random agent", "oracle", "model before training", "model after training", "(ALFWorld)"):
        assert label in report
    assert report.count("agentgym eval ") == 6 and "agentgym train " in report
    assert "![learning curve](learning_curve.png)" in report
    assert (demo_dir / "learning_curve.png").stat().st_size > 1000
    assert "<html" in (demo_dir / "trajectories.html").read_text().lower()


def test_report_numbers_come_from_the_run(demo_dir: Path) -> None:
    results = json.loads((demo_dir / "results.json").read_text())
    report = (demo_dir / "report.md").read_text()
    for key in ("random", "oracle", "before", "after"):
        summary = json.loads((Path(results[key]["out_dir"]) / "summary.json").read_text())
        assert summary["success_rate"] == results[key]["success_rate"]
        assert f"{summary['success_rate']:.2f}" in report
    assert results["oracle"]["success_rate"] == 1.0
    assert len(results["train"]["history"]) >= 1
    assert Path(results["train"]["model"], "config.json").exists()


def test_bad_flags_are_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--steps", "0"]) == 2
    assert "--steps must be at least 1" in capsys.readouterr().err
    assert main(["demo", "--env-kwargs", "{oops"]) == 2

"""``agentgym demo`` end to end on the tiny model with small numbers: every stage (evaluations,
SFT on oracle episodes, GRPO with held-out evaluation during training) writes its outputs, and
the report holds the numbers recomputed from the saved episodes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.demo.report import ROWS
from agentgym_suite.demo.stats import episodes_success
from agentgym_suite.trainers.step_profile import PHASES, read_step_times

EVALS = [key for key, _ in ROWS]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    code = main(["demo", "--model", "tiny", "--train-games", "3", "--eval-episodes", "3", "--steps", "2",
                 "--eval-every", "1", "--group-size", "2", "--tasks-per-step", "1", "--max-turns", "2",
                 "--max-new-tokens", "4", "--sft-epochs", "1", "--sft-batch-size", "2", "--lora-r", "4",
                 "--out", str(out)])
    assert code == 0
    return out


def test_every_stage_wrote_its_outputs(demo_dir: Path) -> None:
    for key in EVALS:
        assert (demo_dir / "eval" / key / "summary.json").is_file()
        assert len((demo_dir / "eval" / key / "trajectories.jsonl").read_text().splitlines()) == 3
    oracle = [json.loads(line) for line in (demo_dir / "sft" / "oracle_episodes.jsonl").read_text().splitlines()]
    assert len(oracle) == 3 and all(r["won"] for r in oracle)
    assert all(m["role"] == "assistant" for r in oracle for m in r["messages"][2::2])
    for stage in ("sft", "grpo"):
        assert (demo_dir / stage / "model" / "config.json").is_file()
        assert not (demo_dir / stage / "model" / "adapter_config.json").exists()  # merged: a plain model
        records = read_step_times(demo_dir / stage / "step_times.jsonl")
        assert records and all(set(PHASES) <= set(r) for r in records)
    assert len(read_step_times(demo_dir / "grpo" / "step_times.jsonl")) == 2
    assert all(r["rollout_generation"] > 0 for r in read_step_times(demo_dir / "grpo" / "step_times.jsonl"))
    history = json.loads((demo_dir / "grpo" / "log_history.json").read_text())
    assert [h["step"] for h in history if "eval_success_rate" in h] == [1]  # the last step: the after evaluation
    for name in ("learning_curve.png", "step_times.png"):
        assert (demo_dir / name).stat().st_size > 1000
    assert "<html" in (demo_dir / "trajectories.html").read_text().lower()


def test_report_numbers_are_read_back_from_the_saved_episodes(demo_dir: Path) -> None:
    results = json.loads((demo_dir / "results.json").read_text())
    report = (demo_dir / "report.md").read_text()
    for key, label in ROWS:
        saved = episodes_success(Path(results[key]["out_dir"]) / "trajectories.jsonl")
        summary = json.loads((Path(results[key]["out_dir"]) / "summary.json").read_text())
        assert saved["success_rate"] == summary["success_rate"]
        row = next(line for line in report.splitlines() if line.startswith(f"| {label} |"))
        assert f"| {saved['episodes']} | {saved['won']} | {100 * saved['success_rate']:.1f}% |" in row
        assert f"[{100 * saved['ci_low']:.1f}%, {100 * saved['ci_high']:.1f}%]" in row
    oracle = episodes_success(Path(results["oracle"]["out_dir"]) / "trajectories.jsonl")
    assert oracle["success_rate"] == 1.0
    before = episodes_success(Path(results["before"]["out_dir"]) / "trajectories.jsonl")
    after = episodes_success(Path(results["after"]["out_dir"]) / "trajectories.jsonl")
    total = re.search(r"\| total \(before -> after SFT \+ GRPO\) \| ([+-][0-9.]+) \|", report)
    assert total and float(total.group(1)) == pytest.approx(round(100 * (after["success_rate"] - before["success_rate"]), 1))
    # the learning curve's in-training point is the trainer's logged held-out success
    history = json.loads((demo_dir / "grpo" / "log_history.json").read_text())
    during = next(h for h in history if h.get("step") == 1 and "eval_success_rate" in h)
    assert f"| GRPO step 1 (during training) | {100 * during['eval_success_rate']:.1f}% | 3 |" in report
    # every number has its command, and the seeds are printed
    assert report.count("agentgym eval ") == len(ROWS) and "agentgym train configs/demo_cpu.yaml" in report
    assert "--seed 0" in report and results["command"].startswith("agentgym demo ")


def test_bad_flags_are_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--steps", "0"]) == 2
    assert "--steps must be at least 1" in capsys.readouterr().err
    assert main(["demo", "--env-kwargs", "{oops"]) == 2
    assert main(["demo", "--train-games", "0"]) == 2

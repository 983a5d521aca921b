"""The real ``agentgym demo`` (the embedded SmolLM2-135M-Instruct, default settings): the report's
held-out rates, intervals and gain are the ones the saved episodes give, and the gain is a
measured one (at least 15 points, the before and after intervals apart). About 10 minutes on 2
idle cores, so ``slow``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.demo.report import ROWS
from agentgym_suite.demo.stats import episodes_success, intervals_overlap


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_real_demo_report_is_computed_from_its_episodes_and_shows_a_gain(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    report = (out / "report.md").read_text()
    saved = {key: episodes_success(Path(results[key]["out_dir"]) / "trajectories.jsonl") for key, _ in ROWS}
    for key, label in ROWS:
        row = next(line for line in report.splitlines() if line.startswith(f"| {label} |"))
        s = saved[key]
        assert s["episodes"] >= 48
        assert f"| {s['episodes']} | {s['won']} | {100 * s['success_rate']:.1f}% |" in row
        assert f"[{100 * s['ci_low']:.1f}%, {100 * s['ci_high']:.1f}%]" in row
    gain = saved["after"]["success_rate"] - saved["before"]["success_rate"]
    shown = re.search(r"\| total \(before -> after SFT \+ GRPO\) \| ([+-][0-9.]+) \| (yes|no) \|", report)
    assert shown and float(shown.group(1)) == pytest.approx(round(100 * gain, 1))
    overlap = intervals_overlap(saved["before"], saved["after"])
    assert shown.group(2) == ("yes" if overlap else "no")
    assert gain >= 0.15 and not overlap, f"held-out gain {gain:+.3f}, intervals overlap: {overlap}"

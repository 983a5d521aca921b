"""``agentgym plot``: reads eval summaries, per-step summaries and metrics.jsonl; writes a PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.evaluation.plotting import collect, plot_runs

PNG = b"\x89PNG\r\n\x1a\n"


def _summary(path: Path, env: str, rate: float) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "summary.json").write_text(json.dumps({"env_id": env, "success_rate": rate, "episodes": 4}))


@pytest.fixture()
def runs(tmp_path: Path) -> list[Path]:
    a, b, train = tmp_path / "base", tmp_path / "tuned", tmp_path / "train"
    _summary(a, "ALFWorld-v0", 0.25)
    _summary(b, "ALFWorld-v0", 0.5)
    _summary(train / "step_20", "WebShop-v0", 0.4)
    _summary(train / "step_10", "WebShop-v0", 0.2)
    lines = [
        {"step": 5, "eval/ALFWorld-v0/success_rate": 0.1},
        {"step": 15, "success_rate": 0.3, "env_id": "ALFWorld-v0"},
        "not json",
        {"loss": 1.0},
    ]
    (train / "metrics.jsonl").write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines))
    return [a, b, train]


def test_collect_reads_every_format(runs: list[Path]) -> None:
    finals, series = collect(runs)
    assert [(p.run, p.env_id, p.success_rate) for p in finals] == [
        ("base", "ALFWorld-v0", 0.25),
        ("tuned", "ALFWorld-v0", 0.5),
    ]
    lines = {s.env_id: s.points for s in series}
    assert lines == {"ALFWorld-v0": [(5, 0.1), (15, 0.3)], "WebShop-v0": [(10, 0.2), (20, 0.4)]}


def test_plot_writes_png(runs: list[Path], tmp_path: Path) -> None:
    out = plot_runs(runs, tmp_path / "figs" / "rates.png")
    data = out.read_bytes()
    assert data.startswith(PNG) and len(data) > 10_000


def test_plot_command_and_errors(runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.png"
    assert main(["plot", *map(str, runs[:2]), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(PNG)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["plot", str(empty), "--out", str(tmp_path / "x.png")]) == 2
    assert "found no summary.json" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()

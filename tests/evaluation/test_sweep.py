"""``agentgym eval ID --sweep NAME[:ARGS]``: variants declared by the env run resumably, then one aggregate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym_suite.core.sweeps import Sweep, SweepOutcome, SweepRequest, Variant, VariantResult
from agentgym_suite.evaluation.sweep import SWEEP_FILE, find_sweep, run_sweep

from .fake_env import FakeEvalEnv

SWEPT_ID = "FakeSweep-v0"


def _variants(request: SweepRequest) -> list[Variant]:
    return [Variant(f"n{n}", {"n_tasks": int(n)}) for n in request.args.split(",")]


def _aggregate(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    return SweepOutcome({"tasks": {name: r.summary["tasks"] for name, r in results.items()},
                         "success": {name: r.summary["success_rate"] for name, r in results.items()}},
                        files={"sizes.json": {"variants": list(results)}})


class SweptEnv(FakeEvalEnv):
    """The fake env with a throwaway sweep over its number of tasks."""

    @classmethod
    def sweeps(cls) -> list[Any]:
        return [Sweep("sizes", "sizes:N,M", _variants, _aggregate)]


def setup_module() -> None:
    if SWEPT_ID not in gym.registry:
        gym.register(id=SWEPT_ID, entry_point=SweptEnv, max_episode_steps=6)


def test_sweep_runs_each_variant_resumes_and_aggregates(tmp_path: Path) -> None:
    result = run_sweep(SWEPT_ID, "oracle", "sizes", args="2,3", out_dir=tmp_path, progress=False)
    assert result.outcome.data == {"tasks": {"n2": 2, "n3": 3}, "success": {"n2": 1.0, "n3": 1.0}}
    for name, count in (("n2", 2), ("n3", 3)):
        assert len((tmp_path / name / "trajectories.jsonl").read_text().splitlines()) == count
    assert json.loads((tmp_path / "sizes.json").read_text()) == {"variants": ["n2", "n3"]}  # the aggregate's own file
    written = json.loads((tmp_path / SWEEP_FILE).read_text())
    assert written["sweep"] == "sizes" and [v["name"] for v in written["variants"]] == ["n2", "n3"]
    assert written["aggregate"]["tasks"] == {"n2": 2, "n3": 3}
    built = FakeEvalEnv.created
    again = run_sweep(SWEPT_ID, "oracle", "sizes", args="2,3", out_dir=tmp_path, progress=False)
    assert again.outcome.data == result.outcome.data
    assert len((tmp_path / "n3" / "trajectories.jsonl").read_text().splitlines()) == 3  # resumed, nothing re-run
    assert FakeEvalEnv.created - built <= 2  # at most one env built per variant to read its task ids


def test_cli_sweep_and_unknown_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    setup_module()
    assert main(["eval", SWEPT_ID, "--agent", "oracle", "--sweep", "sizes:1,2", "--out", str(tmp_path), "--no-progress",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"] == {"n1": 1, "n2": 2}
    assert main(["eval", SWEPT_ID, "--sweep", "nope", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "declares no sweep 'nope'" in err and "sizes" in err
    assert main(["eval", SWEPT_ID, "--sweep", "sizes:1", "--skillrise", "sequence:2", "--out", str(tmp_path / "y")]) == 2
    assert "give one" in capsys.readouterr().err


def test_every_env_is_offered_skillrise_and_benchmarks_declare_their_sweeps() -> None:
    setup_module()
    assert find_sweep(SWEPT_ID, "skillrise").any_env
    assert find_sweep("BFCL-v0", "categories").name == "categories"
    assert find_sweep("VitaBench-v0", "memories").name == "memories"
    assert find_sweep("Tau2-v0", "domains").name == "domains"
    with pytest.raises(ValueError, match="declares no sweep"):
        find_sweep("TextWorld-v0", "memories")


def test_old_flag_is_an_alias_of_its_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    setup_module()
    common = ["--agent", "oracle", "--episodes", "2", "--no-progress", "--json"]
    assert main(["eval", SWEPT_ID, "--sweep", "skillrise:sequence:2", "--out", str(tmp_path / "s"), *common]) == 0
    by_sweep = json.loads(capsys.readouterr().out)
    assert main(["eval", SWEPT_ID, "--skillrise", "sequence:2", "--out", str(tmp_path / "a"), *common]) == 0
    assert json.loads(capsys.readouterr().out) == by_sweep and by_sweep["pass_at_position"] == [1.0, 1.0]
    for out in (tmp_path / "s", tmp_path / "a"):
        written = json.loads((out / SWEEP_FILE).read_text())
        assert written["sweep"] == "skillrise" and written["aggregate"] == by_sweep
        assert written["variants"][0]["env_id"] == "SkillRise-v0" and (out / "skillrise.json").exists()

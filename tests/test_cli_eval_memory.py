"""``agentgym eval VitaBench-v0 --memory a,b,c``: one evaluation per backend on the same 2.0 sequences, one table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.core.data import has_benchmark_data

from envs.vitabench_v2_fixture import write

pytestmark = pytest.mark.skipif(not has_benchmark_data("vitabench", "prompts"), reason="needs the VitaBench prompt YAMLs")


def test_memory_comparison_runs_each_backend_on_the_same_subtasks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    kwargs = json.dumps({"sequences_path": str(write(tmp_path / "tasks.json"))})
    out = tmp_path / "cmp"
    args = ["eval", "VitaBench-v0", "--env-kwargs", kwargs, "--agent", "oracle", "--k", "2", "--out", str(out), "--no-progress",
            "--memory", "none,full,embedding:hashing,groundtruth"]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["memory"] for r in rows] == ["none", "full", "embedding:hashing", "groundtruth"]
    for row in rows:
        assert row["scoring"] == "state_check" and row["user_simulator"] == "scripted"
        assert row["users"] == 2 and row["subtasks"] == 5 and row["unscorable_episodes"] == 2  # U2002/1 has rubrics only
        assert row["avg@k"] == row["pass@k"] == row["pass^k"] == 1.0  # the oracle wins every scorable subtask
        assert set(row["by_user"]) == {"U1001", "U2002"}
    tasks = [{json.loads(x)["task_id"] for x in (out / f"memory-{m}" / "trajectories.jsonl").read_text().splitlines()}
             for m in ("none", "full")]
    assert tasks[0] == tasks[1] == {"U1001/0", "U1001/1", "U1001/2", "U1001/3", "U2002/0", "U2002/1"}  # the OTA subtask too
    assert json.loads((out / "comparison.json").read_text())["rows"][0]["memory"] == "none"
    assert main(args) == 0  # resumed: nothing to run again, the same table
    printed = capsys.readouterr().out
    assert "Avg@2" in printed and "embedding:hashing" in printed and "groundtruth" in printed


def test_plain_run_reports_per_user_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kwargs = json.dumps({"version": 2, "memory": "bm25", "sequences_path": str(write(tmp_path / "tasks.json"))})
    assert main(["eval", "VitaBench-v0", "--env-kwargs", kwargs, "--agent", "oracle", "--out", str(tmp_path / "r"), "--no-progress",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["by_sequence"]) == {"U1001", "U2002"} and summary["labels"]["memory"] == ["bm25"]
    assert summary["by_sequence"]["U1001"]["subtasks"] == 4 and summary["sequence_metrics"]["overall"]["avg@k"] == 1.0


@pytest.mark.parametrize("env_id,kwargs,message", [
    ("Tau2-v0", '{"domain": "mock"}', "declare a 'memories' sweep"),
    ("VitaBench-v0", '{"memory": "full"}', "memories sweep only"),
    ("VitaBench-v0", '{"version": 1}', "version"),
])
def test_memory_flag_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], env_id: str, kwargs: str, message: str) -> None:
    code = main(["eval", env_id, "--env-kwargs", kwargs, "--agent", "oracle", "--memory", "none", "--out", str(tmp_path / "x")])
    assert code == 2 and message in capsys.readouterr().err

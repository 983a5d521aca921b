"""Failures of an OpenAI-compatible server show: on the terminal, in the summary and in the exit status.

The stub server (``stub_openai``) answers like a strict OpenAI API and fails on demand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main

from reliability.fakes import HANG_ID, TOOLS_ID
from reliability.stub_openai import stub_server


def _eval(url: str, out: Path, *extra: str, model: str = "stub", env: str = HANG_ID, tasks: int = 3) -> int:
    return main(["eval", env, "--agent", f"openai:{model}@{url}", "--out", str(out), "--no-progress",
                 "--episodes", str(tasks), "--temperature", "0", "--max-new-tokens", "8", "--max-retries", "0",
                 "--request-timeout", "1.5", *extra])


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_crashes_are_printed_once_per_kind_and_left_out_of_the_success_rate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # task-1 answers HTTP 500, task-2 invalid JSON, task-3 after the timeout; task-0 plays normally
    with stub_server() as (url, state):
        code = _eval(url, tmp_path, "--env-kwargs", json.dumps({"n_tasks": 4}), "--batch-size", "4", tasks=4)
    captured = capsys.readouterr()
    assert code == 1 and state.invalid == []
    assert "3 episode(s) crashed" in captured.err and "--allow-errors" in captured.err
    for kind in ("agent: BackendError, HTTP 500", "agent: BackendError, not valid JSON", "agent: BackendError, timed out"):
        assert captured.err.count(f"crashed ({kind})") == 1, kind
    summary = _summary(tmp_path)
    assert (summary["completed"], summary["crashed"], summary["won"], summary["lost"]) == (1, 3, 1, 0)
    assert summary["success_rate"] == 1.0  # of the one completed episode; the crashes are no losses
    assert sum(summary["crash_kinds"].values()) == 3
    assert "won / lost / crashed" in captured.out and "1 / 0 / 3" in captured.out
    assert "(3 crashed, left out)" in captured.out


def test_a_dead_server_exits_nonzero_and_a_rerun_says_how_to_retry(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with stub_server(faults={}, mode="fail") as (url, state):
        assert _eval(url, tmp_path) == 1
        first = capsys.readouterr()
        assert first.err.count("crashed (agent: BackendError, HTTP 500)") == 1
        assert _summary(tmp_path)["crashed"] == 3 and _summary(tmp_path)["success_rate"] is None
        state.mode = ""  # the server is fixed
        seen = sum(state.requests.values())
        assert _eval(url, tmp_path) == 1  # a plain rerun keeps the crashed episodes, and says so
        rerun = capsys.readouterr()
        assert sum(state.requests.values()) == seen
        assert "3 episode(s) of the earlier run" in rerun.err and "--retry-failed" in rerun.err
        assert _eval(url, tmp_path, "--retry-failed") == 0
    summary = _summary(tmp_path)
    assert summary["crashed"] == 0 and summary["won"] == 3 and summary["success_rate"] == 1.0
    assert not (tmp_path / "trajectories.jsonl.corrupt").exists()  # nothing was corrupt
    retried = [json.loads(line) for line in (tmp_path / "trajectories.retried.jsonl").read_text().splitlines()]
    assert len(retried) == 3 and all("HTTP 500" in r["error"] for r in retried)


def test_wrong_model_and_missing_tool_flags_say_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with stub_server(faults={}, tool_parser=False) as (url, state):
        assert _eval(url, tmp_path / "model", model="no-such-model") == 1
        err = capsys.readouterr().err
        assert "HTTP 404" in err and "the server serves stub" in err
        assert _eval(url, tmp_path / "tools", env=TOOLS_ID, tasks=2) == 1
        err = capsys.readouterr().err
        assert "HTTP 400" in err and "--enable-auto-tool-choice --tool-call-parser hermes" in err
        assert "--tools-in-prompt" in err
        assert _eval(url, tmp_path / "tools", "--allow-errors", env=TOOLS_ID, tasks=2) == 0  # accepted on request
    assert state.invalid == []

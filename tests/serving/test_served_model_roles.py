"""Envs on `agentgym serve` servers (``--env-workers openenv://…``) play their model-played roles in the
server's process: the server caches and records those calls (``agentgym serve --model-cache DIR
--model-ledger FILE``), and the run that plays them says, in its output and its summary, that its own
cache settings do not reach them and that it does not count them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.cli import main
from agentgym_suite.llm.call_cache import CallCache, CallLedger
from evaluation.test_model_roles import role_play
from reliability.stub_openai import stub_server
from serving.conftest import ServerProcess


ROLE_MODELS = ("customer", "judge-a")


def play(body: dict[str, Any]) -> str:
    """The agent (a remote env has no oracle) apologises; the customer and the judge are test_model_roles' own."""
    return "Sorry, I cannot do that." if body["model"] == "agent" else role_play(body)


def _role_requests(state: Any) -> int:
    return sum(1 for e in state.answered() if e.body["model"] in ROLE_MODELS)


def _trajectories(out: Path) -> list[dict]:
    lines = (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    records = sorted((json.loads(line) for line in lines), key=lambda r: (r["task_id"], r.get("attempt", 0)))
    return [{"task": r["task_id"], "actions": [t["completion_text"] for t in r["turns"]],
             "observations": [t["observation"] for t in r["turns"]], "score": r["score"]} for r in records]


@pytest.mark.slow  # starts a τ² server and plays two evaluations through it (~25 s)
def test_a_served_env_caches_its_roles_on_the_server_and_the_run_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = tmp_path / "server-ledger.sqlite"
    with stub_server(faults={}, reply=play) as (url, state):
        kwargs = {"domain": "retail", "user": f"llm:openai:customer@{url}", "judge": f"openai:judge-a@{url}"}
        server = ServerProcess("Tau2-v0", kwargs, "--model-cache", str(tmp_path / "server-cache"),
                               "--model-ledger", str(ledger))
        try:
            common = ["eval", "Tau2-v0", "--agent", f"openai:agent@{url}", "--episodes", "2", "--k", "1", "--seed", "5",
                      "--no-progress",
                      "--env-workers", f"openenv://127.0.0.1:{server.port}"]
            assert main([*common, "--out", str(tmp_path / "first")]) == 0
            paid = _role_requests(state)
            assert paid > 0  # the server's customer (and judge) asked the stub
            printed = " ".join(capsys.readouterr().out.split())
            assert "model-played roles: the envs run on OpenEnv servers" in printed and "not counted here" in printed
            assert main([*common, "--out", str(tmp_path / "second")]) == 0
            assert _role_requests(state) == paid  # the server's cache answered every call of the replay
        finally:
            server.stop()
    assert _trajectories(tmp_path / "second") == _trajectories(tmp_path / "first")
    summary = json.loads((tmp_path / "second" / "summary.json").read_text())
    served = summary["model_calls"]["served_envs"]
    assert served["accounted"] is False and served["env_workers"].startswith("openenv://127.0.0.1:")
    assert "roles" not in summary["model_calls"]  # no call was made in this run's processes
    rows = CallLedger(ledger).rows()  # the server recorded them
    assert {row["role"] for row in rows} == {"user", "judge"}
    assert sum(1 for row in rows if not row["cached"]) == paid
    assert sum(1 for row in rows if row["cached"]) == paid


def test_serve_refuses_a_damaged_model_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "cache"
    path = CallCache(folder).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a cache at all" * 10)
    assert main(["serve", "SyntheticTools-v0", "--model-cache", str(folder), "--port", "1"]) == 2
    assert "agentgym serve:" in capsys.readouterr().err

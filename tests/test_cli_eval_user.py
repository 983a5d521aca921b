"""``agentgym eval`` on envs with a simulated user: --user and --judge, the default user, the labels, unscorable tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.commands.eval import apply_user_and_judge
from agentgym_suite.core.data import has_benchmark_data

pytestmark = pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found; set AGENTGYM_DATA")


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict, list[dict]]:
    out = tmp_path / "run"
    assert main(["eval", "Tau2-v0", "--out", str(out), "--no-progress", "--json", "--k", "1", *args]) == 0
    summary = json.loads(capsys.readouterr().out)
    lines = [json.loads(line) for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    return summary, lines


def test_default_user_is_scripted_for_the_oracle_and_labelled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary, lines = _run(tmp_path, capsys, "--env-kwargs", '{"domain": "mock"}', "--agent", "oracle", "--episodes", "2")
    assert summary["labels"]["user_simulator"] == ["scripted"] and summary["env_kwargs"]["user"] == "scripted"
    assert all(line["turns"][-1]["info"]["user_simulator"] == "scripted" for line in lines)


def test_user_flag_puts_the_llm_user_in_charge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kwargs = '{"domain": "mock", "user_sampling": {"temperature": 1.0, "max_new_tokens": 8}}'
    summary, lines = _run(tmp_path, capsys, "--env-kwargs", kwargs, "--agent", "oracle", "--episodes", "1", "--user", "llm:tiny",
                          "--max-turns", "3")
    assert summary["labels"]["user_simulator"] == ["llm:tiny"] and summary["env_kwargs"]["user"] == "llm:tiny"
    assert lines[0]["turns"][-1]["info"]["user_simulator"] == "llm:tiny"


def test_a_model_agent_gets_the_llm_user_by_default() -> None:
    assert apply_user_and_judge("Tau2-v0", {}, "tiny", None, None)["user"] == "llm:tiny"
    assert apply_user_and_judge("Tau2-v0", {}, "hf:some/model", None, "hf:judge")["judge"] == "hf:judge"
    assert apply_user_and_judge("Tau2-v0", {"user": "scripted"}, "tiny", None, None)["user"] == "scripted"
    assert apply_user_and_judge("VitaBench-v0", {}, "oracle", None, None)["user"] == "scripted"
    with pytest.raises(ValueError, match="conflicts"):
        apply_user_and_judge("Tau2-v0", {"user": "scripted"}, "tiny", "llm:tiny", None)


def test_user_flag_on_an_env_without_a_user_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "TextWorld-v0", "--agent", "random", "--user", "llm:tiny", "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2 and "--user applies to envs" in capsys.readouterr().err


def test_nl_tasks_without_a_judge_are_left_out_and_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary, lines = _run(tmp_path, capsys, "--env-kwargs", '{"domain": "retail", "split": "test"}', "--agent", "oracle",
                          "--episodes", "8", "--seed", "1")
    unscorable = [line for line in lines if line["turns"][-1]["info"].get("scorable") is False]
    scored = [line for line in lines if line not in unscorable]
    assert unscorable and scored, "the seed should pick tasks of both kinds"
    assert summary["unscorable_episodes"] == len(unscorable) and summary["labels"]["nl_judge"] == ["none"]
    assert summary["success_rate"] == pytest.approx(sum(line["won"] for line in scored) / len(scored)) == 1.0

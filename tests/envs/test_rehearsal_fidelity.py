"""Fidelity report: the real env against itself scores 1.0; a corrupted world model scores lower."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.methods.envace import format_execution_result
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.methods.envace.fidelity import ALL, METRICS, key_agreement, key_paths, run_fidelity, write_report


def test_key_paths_and_agreement() -> None:
    assert key_paths({"a": {"b": 1}, "c": [{"d": 2}]}) == {"a", "a.b", "c", "c[].d"}
    assert key_agreement('{"a": 1}', {"a": 2}) == 1.0
    assert key_agreement({"a": 1, "b": 2}, {"a": 1}) == 0.5
    assert key_agreement("text", {"a": 1}) == 0.0


@pytest.mark.parametrize("base,kwargs", [("SyntheticTools-v0", {"seed": 0}), ("Tau2-v0", {"domain": "retail"})])
def test_real_against_real_is_perfect(base: str, kwargs: dict) -> None:
    from agentgym_suite.core.data import has_benchmark_data

    if base == "Tau2-v0" and not has_benchmark_data("tau2", "domains"):
        pytest.skip("tau2 data not found")
    report = run_fidelity(base, "real", episodes=3, base_env_kwargs=kwargs)
    assert report.per_tool[ALL]["calls"] > 0
    for tool, row in report.per_tool.items():
        assert all(row[m] == 1.0 for m in METRICS), (tool, row)


def test_corrupted_world_model_scores_lower(tmp_path: Path) -> None:
    wrong = ScriptedBackend(lambda name, args: format_execution_result({"unrelated": 0}) if name.startswith("search")
                            else "not json at all")
    report = run_fidelity("SyntheticTools-v0", wrong, episodes=3, base_env_kwargs={"seed": 0})
    overall = report.per_tool[ALL]
    assert overall["format_valid"] < 1.0 and overall["key_agreement"] < 0.5 and overall["exact_agreement"] == 0.0
    assert overall["success_check_agreement"] < 1.0  # the broken world ends episodes before the oracle's work is done
    assert overall["tf_format_valid"] < 1.0 and overall["tf_exact_agreement"] == 0.0
    search = [t for t in report.per_tool if t.startswith("search")]
    assert search and all(report.per_tool[t]["format_valid"] == 1.0 for t in search)
    json_path, png_path = write_report(report, tmp_path)
    data = json.loads(json_path.read_text())
    assert data["world_model"] == "scripted" and data["per_tool"][ALL]["calls"] == overall["calls"]
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_teacher_forced_answers_use_the_real_history() -> None:
    """A world that answers right only when the real previous result is in its prompt: the replay drifts, one-step does not."""
    def world(name: str, args: dict) -> str:
        return format_execution_result({"ok": True})
    prompts: list[str] = []

    class Recording(ScriptedBackend):
        def generate(self, prompts_in, params, tools=None):  # type: ignore[no-untyped-def]
            prompts.extend(p[-1]["content"] for p in prompts_in)
            return super().generate(prompts_in, params, tools)

    report = run_fidelity("SyntheticTools-v0", Recording(world), episodes=1, base_env_kwargs={"seed": 0, "task_length": 3})
    [episode] = report.episodes
    assert len(episode.calls) >= 2 and all("tf_key_agreement" in c for c in episode.calls)
    # the one-step prompts for the second call carry the first call's real result
    first = report.episodes[0]
    assert first.real_won and len(prompts) >= len(episode.calls)
    assert any("Tool[" in p for p in prompts[-len(episode.calls) + 1:])


def test_cli_writes_files_and_rejects_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    assert main(["fidelity", "SyntheticTools-v0", "--world-model", "real", "--episodes", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fidelity of real on SyntheticTools-v0" in out and "tf_exact_agreement" in out and "success_check" in out and (tmp_path / "fidelity.json").exists() and (tmp_path / "fidelity.png").exists()
    assert main(["fidelity", "SyntheticTools-v0", "--world-model", "real", "--out", str(tmp_path), "--env-kwargs", "[1]"]) == 2
    assert "JSON object" in capsys.readouterr().err

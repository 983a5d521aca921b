"""``agentgym eval``: benchmark-declared evaluation defaults and the per-domain leaderboard view (``--domains``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.commands.eval import evaluation_settings
from agentgym_suite.core.data import has_benchmark_data

needs_tau2 = pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found; set AGENTGYM_DATA")


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"k": None, "temperature": None, "max_new_tokens": None, **given})


def test_tau2_declares_the_official_sampling_and_trials() -> None:
    values, sources = evaluation_settings("Tau2-v0", _args())
    assert values == {"k": 4, "temperature": 0.0, "max_new_tokens": 4096}
    assert all("Tau2-v0 evaluation default" in sources[key] for key in values)


def test_flags_win_over_the_declared_defaults_and_other_envs_keep_the_suite_defaults() -> None:
    values, sources = evaluation_settings("Tau2-v0", _args(k=2, temperature=0.7))
    assert values == {"k": 2, "temperature": 0.7, "max_new_tokens": 4096}
    assert sources["k"] == "--k" and sources["temperature"] == "--temperature"
    values, sources = evaluation_settings("TextWorld-v0", _args())
    assert values == {"k": 1} and sources == {"k": "suite default"}


@needs_tau2
def test_domains_prints_the_leaderboard_view_and_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lb"
    code = main(["eval", "Tau2-v0", "--domains", "mock", "--agent", "oracle", "--episodes", "2", "--k", "2",
                 "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "Pass^1" in printed and "Pass^2" in printed and "average Pass^1" in printed
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    mock = data["domains"]["mock"]
    assert data["k"] == 2 and set(mock["pass_hat_k"]) == {"1", "2"} and mock["simulations"] == 4
    assert data["average_pass_1"] == mock["pass_hat_k"]["1"]
    assert mock["termination"]["user_stop"] == 4 and mock["db"]["match"] == 4  # the oracle wins every trial
    # the scripted customer is a test double: the view says it is not comparable
    assert data["comparable_to_leaderboard"] is False
    summary = json.loads((out / "mock" / "summary.json").read_text(encoding="utf-8"))
    assert summary["agent_settings"] == {"temperature": 0.0, "max_new_tokens": 4096}
    assert summary["agent_settings_sources"]["k"] == "--k"


def test_domains_on_an_env_without_domains_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "TextWorld-v0", "--domains", "a,b", "--agent", "random", "--out", str(tmp_path / "x"), "--no-progress"])
    assert code == 2 and "--domains applies to envs that declare a 'domains' sweep" in capsys.readouterr().err

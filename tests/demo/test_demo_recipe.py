"""The demo's recipes without running them: the default is a partial warm start followed by the
rl-gain GRPO stage, ``--recipe full-cloning`` the earlier route, explicit flags win, and the
report names each stage's own gain."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.comparisons.settings import PRESETS
from agentgym_suite.demo import pipeline
from agentgym_suite.demo.pipeline import RECIPES, DemoSettings, _grpo_fields, demo_command
from agentgym_suite.demo.report import gains, stage_sentence


def test_default_recipe_is_a_partial_warm_start_then_the_rl_gain_grpo_stage() -> None:
    s = DemoSettings()
    assert s.recipe == "rl-gain" and RECIPES["rl-gain"] == {}
    assert math.ceil(s.train_games * s.sft_epochs / s.sft_batch_size) == 3  # 3 SFT steps: valid commands, not solved
    preset = PRESETS["rl-gain"]
    for ours, theirs in (("steps", "steps"), ("group_size", "group_size"), ("tasks_per_step", "tasks_per_step"),
                         ("learning_rate", "learning_rate"), ("temperature", "temperature"),
                         ("dynamic_sampling", "dynamic_sampling"), ("max_new_tokens", "max_new_tokens")):
        assert getattr(s, ours) == preset[theirs], ours
    assert s.eval_episodes >= 48


def test_grpo_stage_bounds_evaluation_batches_and_passes_and_leaves_bf16_to_the_cpu_check() -> None:
    fields = _grpo_fields(DemoSettings(), "/models/sft")
    assert fields["per_device_eval_batch_size"] == 16 and fields["max_rows_per_pass"] == 4
    assert fields["dynamic_sampling"] is True and "bf16" not in fields
    assert _grpo_fields(DemoSettings(eval_episodes=8), "m")["per_device_eval_batch_size"] == 8


def _parsed(monkeypatch: pytest.MonkeyPatch, *flags: str) -> DemoSettings:
    seen: list[DemoSettings] = []
    monkeypatch.setattr(pipeline, "run_demo", lambda settings: seen.append(settings) or Path("report.md"))
    assert main(["demo", *flags]) == 0
    return seen[0]


def test_full_cloning_recipe_and_explicit_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _parsed(monkeypatch) == DemoSettings()
    full = _parsed(monkeypatch, "--recipe", "full-cloning")
    assert (full.sft_epochs, full.steps, full.group_size, full.temperature, full.dynamic_sampling) == (2.0, 4, 4, 1.0,
                                                                                                      False)
    mixed = _parsed(monkeypatch, "--recipe", "full-cloning", "--steps", "5", "--dynamic-sampling")
    assert mixed.steps == 5 and mixed.dynamic_sampling is True and mixed.sft_epochs == 2.0
    assert _parsed(monkeypatch, "--no-dynamic-sampling").dynamic_sampling is False


def test_unknown_recipe_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--recipe", "bogus"]) == 2
    assert "unknown recipe 'bogus'" in capsys.readouterr().err


def test_command_reproduces_recipe_and_changed_flags() -> None:
    command = demo_command(DemoSettings(recipe="full-cloning").with_recipe({"recipe"}))
    assert "--recipe full-cloning" in command and "--sft-epochs" not in command
    changed = demo_command(DemoSettings(dynamic_sampling=False, steps=3))
    assert "--no-dynamic-sampling" in changed and "--steps 3" in changed


def test_report_names_each_stages_own_gain() -> None:
    def row(rate: float, low: float, high: float) -> dict[str, float]:
        return {"success_rate": rate, "ci_low": low, "ci_high": high}

    table = {"before": row(0.0, 0.0, 0.07), "after_sft": row(0.45, 0.32, 0.59), "after": row(0.85, 0.73, 0.93)}
    found = {g["stage"]: g for g in gains(table)}
    assert found["GRPO stage"]["gain"] == pytest.approx(0.40) and not found["GRPO stage"]["overlap"]
    assert "+40.0 points" in stage_sentence(found["GRPO stage"])
    assert "a measured gain" in stage_sentence(found["GRPO stage"])
    table["after"] = row(0.5, 0.36, 0.64)
    small = {g["stage"]: g for g in gains(table)}["GRPO stage"]
    assert "overlap" in stage_sentence(small) and "measured" not in stage_sentence(small)

"""``benchmarks/gpu_step.sh --recipe CONFIG``: a recipe's one-step plan keeps its sizes; overrides,
the tiny CPU swap and bad arguments are handled (no GPU needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_step  # noqa: E402
import recipe_step  # noqa: E402

RECIPE = "configs/alfworld_sdar_qwen2.5_7b.yaml"


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    gpu_step.main(list(argv))
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):out.rindex("}") + 1])


def test_dry_run_keeps_the_recipes_sizes_and_runs_one_step(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    written = yaml.safe_load((ROOT / RECIPE).read_text())
    plan = _plan(capsys, "--recipe", RECIPE, "--dry-run")
    for name in ("model_name_or_path", "credit", "env_id", "group_size", "generation_batch_size", "rows_per_update",
                 "max_turns", "max_completion_length", "max_prompt_tokens", "per_device_train_batch_size"):
        assert plan[name] == written[name], name
    assert plan["max_steps"] == 1 and plan["recipe"] == RECIPE


def test_overrides_after_the_separator_and_the_tiny_swap(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    plan = _plan(capsys, "--recipe", RECIPE, "--dry-run", "--", "--generation_batch_size", "64")
    assert plan["generation_batch_size"] == 64 and plan["steps_per_generation"] == 64 // plan["per_device_train_batch_size"]
    tiny = _plan(capsys, "--recipe", RECIPE, "--dry-run", "--tiny")
    group = yaml.safe_load((ROOT / RECIPE).read_text())["group_size"]
    assert tiny["model_name_or_path"] == "tiny" and tiny["group_size"] == group
    assert tiny["generation_batch_size"] == 2 * group and tiny["max_completion_length"] == 8
    assert tiny["rows_per_update"] == 2 * group and tiny["bf16"] is False


def test_bad_arguments_say_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit, match="give a YAML config"):
        gpu_step.main(["--recipe", "configs/recipes/build_cards.py", "--dry-run"])
    with pytest.raises(SystemExit, match="not found"):
        gpu_step.main(["--recipe", "configs/no_such_recipe.yaml", "--dry-run"])
    with pytest.raises(SystemExit):  # recipe-only options without a recipe
        gpu_step.main(["--dry-run"])
    with pytest.raises(SystemExit, match="no architecture for 'org/unknown'"):
        recipe_step.random_model("org/unknown", None, None)


def test_every_model_a_config_names_has_an_architecture() -> None:
    names = {yaml.safe_load(p.read_text()).get("model_name_or_path") for p in (ROOT / "configs").glob("*.yaml")}
    named = {n for n in names if isinstance(n, str) and n.startswith("Qwen/")}
    assert named and named <= set(recipe_step.ARCHITECTURES), named - set(recipe_step.ARCHITECTURES)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_tiny_recipe_step_trains_on_the_cpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "step.json"
    gpu_step.main(["--recipe", "configs/alfworld_grpo_qwen2.5_7b.yaml", "--tiny", "--json", str(out), "--",
                   "--max_turns", "2", "--env_kwargs", '{"split": "valid_seen"}'])
    result = json.loads(out.read_text())
    assert result["max_steps"] == 1 and result["loss"] and result["step_s"] > 0

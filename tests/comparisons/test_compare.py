"""``agentgym compare`` on the tiny model: two plug-ins, one step each, one seed; the report's
numbers recomputed from the saved held-out episodes; resuming runs nothing again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.comparisons.paired import mcnemar_exact, paired_comparison
from agentgym_suite.comparisons.runner import model_path, teacher_needs
from agentgym_suite.comparisons.settings import CompareSettings, check_methods, shared_fields
from agentgym_suite.demo.stats import wilson_interval
from agentgym_suite.llm.tiny import tiny_model_dir
from agentgym_suite.trainers.trajectory_log import read_step

COMMAND = ["compare", "--credit", "grpo,gigpo", "--model", "tiny", "--env-kwargs", '{"n_games": 3}',
           "--eval-env-kwargs", '{"n_games": 3}', "--steps", "1", "--group-size", "2", "--tasks-per-step", "1",
           "--max-turns", "2", "--max-new-tokens", "4", "--lora-r", "4", "--eval-every", "1", "--eval-episodes", "3"]


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compare")
    assert main([*COMMAND, "--out", str(out)]) == 0
    return out


def _outcomes(path: Path) -> dict[str, bool]:
    return {f"{r['task_id']}#{r['seed']}": bool(r["won"]) for r in read_step(path)}


def test_every_method_and_seed_is_trained_and_evaluated(compared: Path) -> None:
    report = json.loads((compared / "report.json").read_text())
    assert report["methods"] == ["grpo", "gigpo"] and report["seeds"] == [0]
    for method in ("grpo", "gigpo"):
        run = report["runs"][method]["0"]
        assert run["final_step"] == 1 and run["steps"] == 1
        assert run["step_s"] > 0 and run["tokens"] > 0 and run["tokens_per_s"] > 0 and run["peak_rss_mb"] > 0
        assert [step for step, _ in run["curve"]] == [0, 1]  # the starting weights, then the one step
        assert f"--credit {method} " in run["command"] and "--seeds 0 " in run["command"]
        config = (compared / "runs" / method / "seed0" / "config.yaml").read_text()
        assert f"credit: {method}" in config
    # the same starting weights, tasks and budget: the configs differ only in credit and output_dir
    import yaml

    configs = [yaml.safe_load((compared / "runs" / m / "seed0" / "config.yaml").read_text()) for m in ("grpo", "gigpo")]
    assert {k for k in configs[0] if configs[0][k] != configs[1][k]} == {"credit", "output_dir"}
    assert (compared / "learning_curves.png").stat().st_size > 1000


def test_report_numbers_are_counted_from_the_saved_episodes(compared: Path) -> None:
    report = json.loads((compared / "report.json").read_text())
    markdown = (compared / "report.md").read_text()
    finals = {}
    for method in ("grpo", "gigpo"):
        outcomes = _outcomes(compared / "runs" / method / "seed0" / "eval_trajectories" / "step_000001.jsonl")
        finals[method] = outcomes
        won, n = sum(outcomes.values()), len(outcomes)
        assert n == 3
        final = report["runs"][method]["0"]["final"]
        assert (final["won"], final["episodes"]) == (won, n)
        assert (final["ci_low"], final["ci_high"]) == pytest.approx(wilson_interval(won, n))
        assert report["summary"][method]["final"]["won"] == won
        assert f"({won}/{n})" in markdown
    start = _outcomes(compared / "start" / "seed0" / "eval_trajectories" / "step_000000.jsonl")
    assert report["start"]["0"]["won"] == sum(start.values()) and report["start"]["0"]["episodes"] == 3
    # the held-out episodes are the same tasks and episode seeds for every method and the start
    assert set(start) == set(finals["grpo"]) == set(finals["gigpo"])
    paired = report["paired"]["gigpo"]["per_seed"]["0"]
    expected = paired_comparison(finals["grpo"], finals["gigpo"])
    assert paired == expected.as_dict() and paired["pairs"] == 3
    assert "grpo" not in report["paired"]  # the reference is not compared with itself
    gain = report["runs"]["gigpo"]["0"]["gain_over_start"]
    assert gain == paired_comparison(start, finals["gigpo"]).as_dict()
    assert "McNemar" in markdown and report["command"] in markdown


def test_running_again_resumes_without_training(compared: Path) -> None:
    units = sorted(compared.glob("runs/*/seed0/unit.json")) + [compared / "start" / "seed0" / "unit.json"]
    stamps = [u.stat().st_mtime_ns for u in units]
    before = json.loads((compared / "report.json").read_text())
    assert main([*COMMAND, "--out", str(compared)]) == 0
    assert [u.stat().st_mtime_ns for u in units] == stamps, "a finished unit was run again"
    assert json.loads((compared / "report.json").read_text()) == before


def test_mcnemar_exact_p_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)  # 2 * 0.5**5
    assert mcnemar_exact(2, 8) == pytest.approx(0.109375)  # 2 * (1 + 10 + 45) / 1024
    assert mcnemar_exact(8, 2) == mcnemar_exact(2, 8)
    assert mcnemar_exact(3, 3) == 1.0
    result = paired_comparison({"a": True, "b": False, "c": True}, {"a": False, "b": True, "c": True, "d": True})
    assert (result.pairs, result.reference_only, result.method_only, result.difference) == (3, 1, 1, 0.0)


def test_methods_that_need_a_teacher_say_so_before_training(tmp_path: Path) -> None:
    lines = teacher_needs(["grpo", "sdar", "vad"], {"teacher_context": "oracle"})
    assert [line.split(":")[0] for line in lines] == ["sdar", "vad"]
    assert "fixed initial weights" in lines[1] and "oracle walkthrough" in lines[0]
    with pytest.raises(FileNotFoundError, match="general.md"):
        teacher_needs(["sdar"], {"teacher_context": "skills", "skills_dir": str(tmp_path)})
    assert teacher_needs(["grpo", "gigpo"], {}) == []


def test_a_method_says_what_its_run_needs_through_its_declaration() -> None:
    from agentgym_suite.trainers.credit import credit_assigner_class

    envace = credit_assigner_class("envace")
    assert envace.run_needs and "env_mode: rehearsal" in envace.run_needs  # declared in the method's own package
    assert teacher_needs(["grpo", "envace"], {}) == [f"envace: {envace.run_needs}"]


def test_bad_settings_are_refused_with_a_fix(tmp_path: Path) -> None:
    import yaml

    with pytest.raises(ValueError, match="twice"):
        check_methods(CompareSettings(methods=["grpo", "grpo"]))
    with pytest.raises(ValueError, match="unknown credit"):
        check_methods(CompareSettings(methods=["grpo", "nope"]))
    with pytest.raises(ValueError, match="unknown preset"):
        CompareSettings(preset="nope").with_preset(set())
    recipe = tmp_path / "no_held_out.yaml"
    recipe.write_text(yaml.safe_dump({"env_id": "TextWorld-v0", "max_turns": 2}))
    with pytest.raises(ValueError, match="held-out"):
        shared_fields(CompareSettings(config=str(recipe)), "model")
    tiny = tmp_path / "tiny_recipe.yaml"
    tiny.write_text(yaml.safe_dump({"model_name_or_path": "tiny", "eval_env_kwargs": {"split": "test"}}))
    assert Path(model_path(CompareSettings(config=str(tiny)))).name == Path(tiny_model_dir()).name
    preset = CompareSettings(preset="rl-gain", steps=3).with_preset({"steps"})
    assert preset.steps == 3 and preset.seeds == [0, 1, 2] and preset.warm_start == "sft:0.375"
    assert main(["compare", "--model", "tiny"]) == 2  # no --credit and no preset


def test_the_printed_command_gives_back_the_same_settings() -> None:
    import shlex

    from agentgym_suite.cli import build_parser
    from agentgym_suite.commands.compare import settings_from
    from agentgym_suite.comparisons.settings import compare_command

    settings = CompareSettings(preset="rl-gain").with_preset(set())
    command = compare_command(settings)
    parsed = settings_from(build_parser().parse_args(shlex.split(command)[1:]))
    assert parsed == CompareSettings(**{**settings.__dict__, "preset": None})
    one = settings_from(build_parser().parse_args(shlex.split(compare_command(settings, methods=["gigpo"],
                                                                              seeds=[2]))[1:]))
    assert one.methods == ["gigpo"] and one.seeds == [2] and one.steps == settings.steps

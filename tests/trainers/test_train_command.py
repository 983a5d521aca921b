"""``agentgym train``: every shipped config parses; the CPU smoke config trains."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from agentgym_suite.cli import build_parser
from agentgym_suite.commands.train import parse_config
from agentgym_suite.trainers.agent_grpo import build_credit

CONFIGS = sorted(p for p in (Path(__file__).parents[2] / "configs").glob("*.yaml") if not p.name.startswith("vllm"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_configs_parse(path, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_CPU", "true")
    cfg = parse_config(str(path), ["--bf16", "false", "--use_cpu", "true", "--output_dir", "/tmp/agentgym-parse"])
    assert cfg.credit and cfg.num_generations >= 2 and cfg.max_turns >= 1
    credit = build_credit(cfg)  # credit_params are valid parameters of the plug-in
    assert set(cfg.credit_params) <= {f.name for f in fields(credit.config_cls)}
    if cfg.credit == "gigpo":
        # the released gigpo_trainer scripts: run_alfworld.sh and run_search.sh set mode=mean_std_norm,
        # run_webshop.sh mode=mean_norm
        script_mode = {"ALFWorld": "mean_std_norm", "SearchQA": "mean_std_norm", "WebShop": "mean_norm"}
        family = next(k for k in script_mode if cfg.env_id.startswith(k))
        assert cfg.credit_params.get("normalization") == script_mode[family], "set normalization explicitly"


def test_flags_override_the_yaml():
    cfg = parse_config("configs/smoke_cpu.yaml", ["--max_steps", "5", "--credit", "sdar", "--credit_params",
                                                  '{"beta": 0}'])
    assert (cfg.max_steps, cfg.credit, cfg.credit_params) == (5, "sdar", {"beta": 0})


def test_bad_flag_value_is_reported(capsys):
    parser = build_parser()
    args = parser.parse_args(["train", "configs/smoke_cpu.yaml", "--row_layout", "episode"])
    assert args.func(args) == 2
    assert "choose one of: turn, trajectory" in capsys.readouterr().err


def test_missing_config_file_is_reported(capsys):
    args = build_parser().parse_args(["train", "no/such/config.yaml"])
    assert args.func(args) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.slow
def test_smoke_config_trains(tmp_path):
    args = build_parser().parse_args(["train", "configs/smoke_cpu.yaml", "--output_dir", str(tmp_path)])
    assert args.func(args) == 0
    assert (tmp_path / "trajectories" / "step_000002.jsonl").exists()
    assert (tmp_path / "config.json").exists()

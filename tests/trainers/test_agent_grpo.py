"""Tiny-model training runs of AgentGRPOTrainer: every registered plug-in, both row layouts, and
the trainer reading each plug-in's declarations instead of its name."""

from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest

from agentgym_suite.envs.skillrise import SkillRiseTrial
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.agent_grpo import build_credit
from agentgym_suite.trainers.credit import CREDIT_ASSIGNERS, available_credit_assigners
from trainers.conftest import changed, snapshot
from trainers.fake_env import make_letter_env


def _train(make_config, **overrides):
    trainer = AgentGRPOTrainer(args=make_config(**overrides), env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    return trainer, before


def _losses(trainer) -> list[float]:
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


@pytest.mark.parametrize("credit", available_credit_assigners())
def test_each_plugin_trains(make_config, tmp_path, credit):
    trainer, before = _train(make_config, credit=credit)
    assert trainer.state.global_step == 2
    assert changed(before, trainer.model), f"{credit}: no parameter changed"
    losses = _losses(trainer)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert any(k.startswith(f"credit/{trainer.credit.name}/") for k in logged), sorted(logged)
    assert {"episodes/success_rate", "episodes/return_mean", "episodes/turns_mean",
            "episodes/invalid_action_rate"} <= logged
    if trainer.credit.has_aux_loss:
        assert f"credit/{trainer.credit.name}/aux_loss" in logged
    files = sorted((tmp_path / "run" / "trajectories").glob("step_*.jsonl"))
    assert [f.name for f in files] == ["step_000001.jsonl", "step_000002.jsonl"]
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert len(lines) == 4 and all(line["turns"] for line in lines)
    assert len({line["group"] for line in lines}) == 2
    assert set(trainer._credit_batch.roles) <= set(trainer.credit.roles)


@pytest.mark.parametrize("credit", available_credit_assigners())
def test_build_credit_reads_the_declarations(make_config, credit):
    cls = CREDIT_ASSIGNERS[credit]
    plugin = build_credit(make_config(credit=credit, invalid_action_penalty=0.37))
    defaults = cls.config_cls()
    for name, value in cls.trainer_defaults.items():
        assert getattr(plugin.config, name) == value
    if "invalid_penalty" in {f.name for f in fields(cls.config_cls)}:
        expected = defaults.invalid_penalty if cls.own_invalid_penalty else 0.37
        assert plugin.config.invalid_penalty == pytest.approx(expected)
    assert type(plugin) is cls


def test_params_win_over_declared_defaults(make_config):
    vad = build_credit(make_config(credit="vad", credit_params={"top_k": None}))
    assert vad.config.top_k is None
    skillrise = build_credit(make_config(credit="skillrise", credit_params={"invalid_penalty": 0.2}))
    assert skillrise.config.invalid_penalty == pytest.approx(0.2)


def test_the_plugin_hook_shapes_the_episodes(make_config):
    # SkillRise wraps every env in a trial: Solve (task 0), Curate, Solve (task 1)
    args = make_config(credit="skillrise", credit_params={"tasks": 2, "turns_per_task": 1}, max_turns=3)
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=1))
    before = snapshot(trainer.model)
    trainer.train()
    assert changed(before, trainer.model)
    assert trainer._envs and all(isinstance(env, SkillRiseTrial) and env.k == 2 for env in trainer._envs)
    batch = trainer._credit_batch
    assert {"solve", "curate"} <= set(batch.roles)
    assert {p for p, r in zip(batch.extras["positions"], batch.roles) if r == "solve"} >= {0, 1}
    assert all(math.isfinite(x) for x in _losses(trainer))


def test_trajectory_layout_masks_env_tokens(make_config):
    trainer, before = _train(make_config, row_layout="trajectory", prompt_format="chat")
    assert changed(before, trainer.model)
    assert all(math.isfinite(x) for x in _losses(trainer))
    rows = [h["episodes/rows"] for h in trainer.state.log_history if "episodes/rows" in h]
    assert rows and all(r == 4 for r in rows), "trajectory layout must give one row per episode"


@pytest.mark.slow
def test_turn_layout_with_chat_prompts(make_config):
    trainer, before = _train(make_config, prompt_format="chat", max_steps=1, credit="gigpo")
    assert changed(before, trainer.model)


@pytest.mark.slow
def test_kl_to_reference(make_config):
    trainer, before = _train(make_config, beta=0.01, max_steps=1)
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert "kl" in logged and changed(before, trainer.model)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["oracle", "env_response"])
def test_teacher_sources(make_config, source):
    trainer, before = _train(make_config, credit="sdar", teacher_context=source, max_steps=1)
    assert changed(before, trainer.model)

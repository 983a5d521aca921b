"""Tiny-model training runs of AgentGRPOTrainer: every plug-in, both row layouts."""

from __future__ import annotations

import json
import math

import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from trainers.conftest import changed, snapshot
from trainers.fake_env import make_letter_env

FAST_PLUGINS = ["grpo", "sdar"]
SLOW_PLUGINS = ["gigpo", "agentopsd", "dr_grpo", "opsd", "rlsd", "skill_sd"]


def _train(make_config, **overrides):
    trainer = AgentGRPOTrainer(args=make_config(**overrides), env_factory=make_letter_env)
    before = snapshot(trainer.model)
    trainer.train()
    return trainer, before


def _losses(trainer) -> list[float]:
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


@pytest.mark.parametrize(
    "credit", FAST_PLUGINS + [pytest.param(name, marks=pytest.mark.slow) for name in SLOW_PLUGINS]
)
def test_each_plugin_trains(make_config, tmp_path, credit):
    trainer, before = _train(make_config, credit=credit)
    assert trainer.state.global_step == 2
    assert changed(before, trainer.model), f"{credit}: no parameter changed"
    losses = _losses(trainer)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert any(k.startswith(f"credit/{credit}/") for k in logged), sorted(logged)
    assert {"episodes/success_rate", "episodes/return_mean", "episodes/turns_mean",
            "episodes/invalid_action_rate"} <= logged
    if trainer.credit.has_aux_loss:
        assert f"credit/{credit}/aux_loss" in logged
    files = sorted((tmp_path / "run" / "trajectories").glob("step_*.jsonl"))
    assert [f.name for f in files] == ["step_000001.jsonl", "step_000002.jsonl"]
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert len(lines) == 4 and all(line["turns"] for line in lines)
    assert len({line["group"] for line in lines}) == 2


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

"""The EnvACE configs train on training worlds with the checklist reward, never on an evaluation benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentgym_suite.commands.train import parse_config
from agentgym_suite.trainers.training_tasks import default_env_factory

CONFIGS = sorted(Path("configs").glob("envace_*.yaml"))
EVALUATION_ENVS = {"BFCL-v0", "Tau2-v0", "VitaBench-v0", "FinMCP-v0"}


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_no_envace_config_trains_on_an_evaluation_benchmark(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    kwargs = data.get("env_kwargs") or {}
    bases = kwargs.get("base_env", data["env_id"])
    bases = bases if isinstance(bases, list) else [bases]
    assert not set(bases) & EVALUATION_ENVS and data["env_id"] not in EVALUATION_ENVS
    assert kwargs.get("reward_mode") == "checklist"  # never gold_calls (imitation)
    assert kwargs.get("judge") != "policy"
    assert data["env_mode"] == "rehearsal" and data["credit"] == "envace"


def test_the_synthetic_config_builds_a_checklist_scored_rehearsal_env() -> None:
    cfg = parse_config("configs/envace_synthetic_qwen3_8b.yaml", ["--model_name_or_path", "tiny", "--use_cpu", "true",
                                                                  "--bf16", "false"])
    env = default_env_factory(cfg)()
    inner = env.unwrapped
    assert inner.base_env_id == "SyntheticTools-v0" and inner.reward_mode == "checklist"
    assert inner.world_model.spec == "policy" and inner.world_model.sampling.structured == ""  # training sampling
    env.reset(seed=0)
    [checklist] = inner.env.checklists()
    assert len(checklist) == 2  # user_turns: 2
    env.close()


def test_one_optimizer_update_per_generation_batch(make_config):
    """EnvACE's schedule (optimizer_steps_per_generation: 1): every generation batch is one update."""
    from agentgym_suite.trainers import AgentGRPOTrainer
    from trainers.fake_env import make_letter_env

    args = make_config(per_device_train_batch_size=2, steps_per_generation=2, optimizer_steps_per_generation=1,
                       max_steps=2)
    assert args.gradient_accumulation_steps == args.steps_per_generation == 2
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    batches = []
    score = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: batches.append(score(inputs)) or batches[-1]
    trainer.train()
    assert trainer.state.global_step == 2 and len(batches) == 2  # two generation batches, one update each

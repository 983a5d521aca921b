"""Each method's paper config trains on one CPU process, scaled down only in model, batch, steps
and budgets (16-token turns, 3 turns an episode: a random tiny model fills every budget, and 50
ALFWorld turns of it outlast the slow suite's timeout on 2 shared cores): the same env, credit,
update schedule shape (rows per update in the same proportion to the generation batch), loss
terms and prompts as the recipe. Slow: each run plays real ALFWorld/WebShop/Search episodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.commands.train import parse_config
from agentgym_suite.core.errors import DataNotFoundError
from trainers.conftest import changed, snapshot

ROOT = Path(__file__).resolve().parents[2]
RUNS = [f"alfworld_{m}_qwen2.5_7b.yaml" for m in
        ("grpo", "gigpo", "sdar", "opsd", "grpo_opsd", "rlsd", "skill_sd", "agentopsd", "vad")]
RUNS += ["alfworld_skillrise_qwen3_4b.yaml", "webshop_grpo_qwen2.5_7b.yaml", "search_gigpo_qwen2.5_7b.yaml"]
EPISODES = 8
"""Episodes per generation batch of the scaled run (4 tasks x G=2)."""


def scaled_down(config: str, output_dir: str):
    """The config with the tiny model, a batch of EPISODES episodes, one step, short budgets."""
    full = parse_config(str(ROOT / "configs" / config), ["--bf16", "false"])
    rows_per_update = max(1, full.rows_per_update * EPISODES // full.generation_batch_size)
    steps = 2 if full.warmup_steps else 1  # a warm-up's first step has learning rate 0
    # SkillRise trials forbid cutting a prompt (prompt_truncation=error: the skill document would go first),
    # so their runs keep the recipe's prompt limit; the others' prompts are cut to 512 tokens to run fast
    prompt_tokens = full.max_prompt_tokens if full.credit == "skillrise" else 512
    overrides = {
        "model_name_or_path": "tiny", "group_size": 2, "generation_batch_size": EPISODES,
        "per_device_train_batch_size": 2, "rows_per_update": rows_per_update, "max_steps": steps,
        "max_completion_length": 16, "max_prompt_tokens": prompt_tokens, "max_turns": 3, "max_rows_per_pass": 16, "num_tasks": 4,
        "eval_strategy": "no", "gradient_checkpointing": False, "report_to": "none", "save_strategy": "no",
        "use_cpu": True, "output_dir": output_dir, "disable_tqdm": True, "env_workers": "1",
    }
    flags = [x for key, value in overrides.items() for x in (f"--{key}", str(value))]
    return parse_config(str(ROOT / "configs" / config), ["--bf16", "false", *flags])


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("config", RUNS)
def test_recipe_config_trains_scaled_down(config: str, tmp_path) -> None:
    from agentgym_suite.trainers import AgentGRPOTrainer

    args = scaled_down(config, str(tmp_path / "run"))
    assert args.gradient_accumulation_steps == args.steps_per_generation == EPISODES // 2
    try:
        trainer = AgentGRPOTrainer(args=args)
    except DataNotFoundError as err:
        pytest.skip(f"{config}: benchmark data not here ({err})")
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == args.max_steps and changed(before, trainer.model)
    logged = {k for h in trainer.state.log_history for k in h}
    assert "updates_per_generation" in logged and "episodes/success_rate" in logged

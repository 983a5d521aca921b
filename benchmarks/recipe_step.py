"""One training step of a recipe config at its own sizes (``gpu_step.sh --recipe configs/X.yaml``).

The config is read as ``agentgym train`` reads it, then only what one timed step needs changes:
``max_steps 1``, a scratch ``output_dir``, no reports, saves, evaluation or trajectory files.
Everything that sizes the step (generation batch, group size, rows per update, completion and
prompt lengths, turns) stays the recipe's. Further ``--field value`` pairs after ``--`` override
the config as on the ``agentgym train`` command line.

The GPU machine cannot download weights: ``--random-weights`` builds a randomly initialised model
of the config's architecture (:data:`ARCHITECTURES`, from the published ``config.json`` files)
with the suite's local tokenizer, ids it does not have suppressed in generation. The env must be
usable there (its data carried in ``$AGENTGYM_DATA``); the script says what is missing otherwise.

``--dry-run`` prints the resolved plan and exits (no model, no env); ``--tiny`` swaps in the tiny
CPU test model and shrinks the batch to two groups of the recipe's group size with 8-token
completions and 512-token prompts, a check of the path, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "Qwen/Qwen2.5-1.5B-Instruct": dict(model_type="qwen2", vocab_size=151936, hidden_size=1536, intermediate_size=8960,
                                       num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                                       tie_word_embeddings=True),
    "Qwen/Qwen2.5-3B-Instruct": dict(model_type="qwen2", vocab_size=151936, hidden_size=2048, intermediate_size=11008,
                                     num_hidden_layers=36, num_attention_heads=16, num_key_value_heads=2,
                                     tie_word_embeddings=True),
    "Qwen/Qwen2.5-7B-Instruct": dict(model_type="qwen2", vocab_size=152064, hidden_size=3584, intermediate_size=18944,
                                     num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                                     tie_word_embeddings=False),
    "Qwen/Qwen3-1.7B": dict(model_type="qwen3", vocab_size=151936, hidden_size=2048, intermediate_size=6144,
                            num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                            tie_word_embeddings=True),
    "Qwen/Qwen3-4B": dict(model_type="qwen3", vocab_size=151936, hidden_size=2560, intermediate_size=9728,
                          num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                          tie_word_embeddings=True),
    "Qwen/Qwen3-4B-Instruct-2507": dict(model_type="qwen3", vocab_size=151936, hidden_size=2560, intermediate_size=9728,
                                        num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8,
                                        head_dim=128, tie_word_embeddings=True, rope_theta=5_000_000.0),
    "Qwen/Qwen3-8B": dict(model_type="qwen3", vocab_size=151936, hidden_size=4096, intermediate_size=12288,
                          num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                          tie_word_embeddings=False),
}
"""Shapes of the models the recipe configs name (their published ``config.json``; rope theta 1e6 unless given)."""

ONE_STEP = ["--max_steps", "1", "--report_to", "none", "--save_strategy", "no", "--eval_strategy", "no",
            "--save_trajectories", "false", "--logging_steps", "1"]
"""What a one-step run changes in any recipe (besides the scratch output_dir)."""

PLAN_FIELDS = ("model_name_or_path", "credit", "env_id", "group_size", "generation_batch_size",
               "per_device_train_batch_size", "steps_per_generation", "rows_per_update", "max_rows_per_pass",
               "max_turns", "max_completion_length", "max_prompt_tokens", "teacher_context", "max_steps", "bf16")
"""The fields the plan prints: what sizes the step."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The recipe options of ``gpu_step.py``."""
    parser.add_argument("--recipe", metavar="CONFIG", help="a configs/*.yaml: run one training step of it at its sizes")
    parser.add_argument("--dry-run", action="store_true", help="with --recipe: print the resolved plan and exit")
    parser.add_argument("--random-weights", action="store_true",
                        help="with --recipe: a randomly initialised model of the config's architecture (no download)")


def resolve(recipe: str, overrides: list[str], *, tiny: bool, output_dir: str) -> Any:
    """The recipe's AgentGRPOConfig for one step (``tiny``: the tiny model and a two-group batch).

    Raises:
        SystemExit: for a missing file or a config ``agentgym train`` would refuse (the message says why).
    """
    import torch

    from agentgym_suite.commands.train import parse_config

    # TrainingArguments refuses bf16 where no GPU is visible; the plan (and a tiny run) are made on the CPU there
    cpu = [] if torch.cuda.is_available() else ["--use_cpu", "true"]
    path = Path(recipe)
    if path.suffix not in (".yaml", ".yml"):
        raise SystemExit(f"--recipe {recipe!r}: give a YAML config such as configs/alfworld_grpo_qwen2.5_7b.yaml.")
    shrink: list[str] = []
    if tiny:
        base = parse_config(recipe, ["--output_dir", output_dir, *cpu])
        rows = 2 * int(base.group_size)
        shrink = ["--model_name_or_path", "tiny", "--generation_batch_size", str(rows),
                  "--per_device_train_batch_size", str(rows),
                  "--max_completion_length", "8", "--max_prompt_tokens", "512", "--max_rows_per_pass", "4", "--use_cpu", "true", "--bf16", "false",
                  "--gradient_checkpointing", "false"]
        if base.rows_per_update is not None:
            shrink += ["--rows_per_update", str(rows)]
    try:
        return parse_config(recipe, [*ONE_STEP, "--output_dir", output_dir, *cpu, *shrink, *overrides])
    except (FileNotFoundError, ValueError) as err:
        raise SystemExit(f"--recipe {recipe}: {err}") from err


def plan(config: Any, recipe: str) -> dict[str, Any]:
    """The values that size the step, by field name, plus the recipe path."""
    return {"recipe": recipe, **{name: getattr(config, name, None) for name in PLAN_FIELDS}}


def random_model(name: str, tokenizer: Any, dtype: Any) -> Any:
    """A randomly initialised model of ``name``'s architecture (:data:`ARCHITECTURES`).

    Raises:
        SystemExit: for a model the table does not hold (naming the ones it does).
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    if name not in ARCHITECTURES:
        raise SystemExit(f"--random-weights: no architecture for {name!r}; known: {', '.join(ARCHITECTURES)}. "
                         "Add its config.json values to benchmarks/recipe_step.py or pass a local model folder.")
    shape = dict(ARCHITECTURES[name])
    shape.setdefault("rope_theta", 1_000_000.0)
    config = AutoConfig.for_model(shape.pop("model_type"), **shape, rms_norm_eps=1e-6,
                                  max_position_embeddings=32768, eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config).to(dtype)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return model


def run_recipe(cli: argparse.Namespace, overrides: list[str]) -> dict[str, Any]:
    """Resolve the recipe, print its plan and (unless ``--dry-run``) time one training step."""
    import torch

    with tempfile.TemporaryDirectory(prefix="gpu_step_recipe-") as out:
        config = resolve(cli.recipe, overrides, tiny=cli.tiny, output_dir=out)
        shown = plan(config, cli.recipe)
        print(json.dumps(shown, indent=1, default=str))
        if cli.dry_run:
            return shown
        if not cli.tiny and not torch.cuda.is_available():
            raise SystemExit("no GPU visible; add --tiny to check the recipe path on the CPU, or --dry-run")
        missing = _missing(config.env_id)
        if missing:
            raise SystemExit(f"{config.env_id} cannot run here: missing {', '.join(missing)}. Carry the data "
                             "($AGENTGYM_DATA) or fetch it (`agentgym data fetch NAME`).")
        from agentgym_suite.trainers import AgentGRPOTrainer

        model, tokenizer = None, None
        if cli.random_weights and not cli.tiny:
            from agentgym_suite.llm.tiny import build_tokenizer

            tokenizer = build_tokenizer()
            model = random_model(config.model_name_or_path, tokenizer, torch.bfloat16 if config.bf16 else torch.float32)
            suppress = list(range(len(tokenizer), model.config.vocab_size))
            config.generation_kwargs = {**(config.generation_kwargs or {}), "suppress_tokens": suppress}
        started = time.perf_counter()
        trainer = AgentGRPOTrainer(model=model, args=config, processing_class=tokenizer)
        built = time.perf_counter()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        trainer.train()
        done = time.perf_counter()
        peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")
        result = {**shown, "build_s": built - started, "step_s": done - built, "peak_gib": peak,
                  "loss": [h["loss"] for h in trainer.state.log_history if "loss" in h]}
        print(f"one step of {cli.recipe}: {result['step_s']:.1f} s (build {result['build_s']:.1f} s), "
              f"peak {peak:.1f} GiB")
        return result


def _missing(env_id: str) -> list[str]:
    from agentgym_suite.registration import all_entries, missing_requirements

    for item in all_entries():
        if item.id == env_id:
            return missing_requirements(item)
    return []

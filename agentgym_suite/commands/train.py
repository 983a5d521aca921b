"""``agentgym train CONFIG.yaml [--flag value ...]``: multi-turn GRPO with a YAML config.

The YAML holds :class:`~agentgym_suite.trainers.AgentGRPOConfig` fields (TRL's GRPOConfig
plus the agent settings); flags override them. Parsed with TRL's ``TrlParser``, so an
``env:`` mapping in the YAML sets environment variables as in TRL's own scripts. Multi-GPU:
``accelerate launch --config_file configs/accelerate/zero3.yaml -m agentgym_suite.cli train …``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand."""
    parser = subparsers.add_parser(
        "train",
        help="train a model on an env with multi-turn GRPO and a credit plug-in (YAML config + flag overrides)",
        description="Train with AgentGRPOTrainer. Example: agentgym train configs/smoke_cpu.yaml --max_steps 3",
    )
    parser.add_argument("config", help="YAML file of AgentGRPOConfig fields (see configs/)")
    parser.add_argument("overrides", nargs=argparse.REMAINDER, help="--field value pairs overriding the YAML")
    parser.add_argument("--resume", action="store_true",
                        help="resume from the last checkpoint in output_dir (same step, same data order)")
    parser.add_argument("--print-recipe", action="store_true",
                        help="print the authors' recipe card (configs/recipes/) beside the resolved config, departures "
                             "marked, and exit without training")
    parser.set_defaults(func=run)


def parse_config(config: str, overrides: list[str]):
    """The AgentGRPOConfig of a YAML file plus ``--field value`` overrides."""
    from trl import TrlParser

    from agentgym_suite.trainers.config import AgentGRPOConfig

    if not Path(config).is_file():
        raise FileNotFoundError(f"config file {config!r} not found; pass a YAML file such as configs/smoke_cpu.yaml.")
    (args,) = TrlParser((AgentGRPOConfig,)).parse_args_and_config(args=["--config", config, *overrides])
    return args


def print_recipe(config_path: str, config: object) -> int:
    """Print the recipe card entry naming ``config_path`` beside ``config``; 1 on an unlisted difference."""
    from agentgym_suite.trainers import recipes

    found = recipes.find_entry(config_path)
    if found is None:
        print(f"agentgym train: no recipe card in {recipes.recipes_dir(config_path)} lists {Path(config_path).name}; "
              "cards cover the papers' configs (configs/recipes/<method>.yaml).", file=sys.stderr)
        return 2
    card, env_key, entry = found
    checks = recipes.compare(entry, config)
    print(recipes.format_comparison(card, env_key, entry, checks))
    return 1 if recipes.problems(checks) else 0


def run(args: argparse.Namespace) -> int:
    """Parse the config, build the trainer, train, save the final model."""
    overrides = [o for o in args.overrides if o not in ("--resume", "--print-recipe")]
    resume = args.resume or "--resume" in args.overrides
    show_recipe = getattr(args, "print_recipe", False) or "--print-recipe" in args.overrides
    try:
        config = parse_config(args.config, overrides)
    except (FileNotFoundError, ValueError) as err:
        print(f"agentgym train: {err}", file=sys.stderr)
        return 2
    if show_recipe:
        return print_recipe(args.config, config)
    from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer

    trainer = AgentGRPOTrainer(args=config)
    trainer.train(resume_from_checkpoint=True if resume else None)
    if config.lora_r:
        trainer.save_merged(config.output_dir)  # the adapter merged in: the folder loads as a plain model
    else:
        trainer.save_model(config.output_dir)
    print(f"agentgym train: done after {trainer.state.global_step} steps; model saved to {config.output_dir}")
    return 0

"""``agentgym demo``: the main job end to end on the embedded default model, offline, on CPU."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, fields

from agentgym_suite.demo.pipeline import DemoSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand with one flag per :class:`DemoSettings` field."""
    parser = subparsers.add_parser(
        "demo",
        help="evaluate the embedded model, train it (SFT on oracle episodes, then GRPO), evaluate on held-out tasks, report",
        description="Runs offline on CPU and writes OUT/report.md. The default recipe (rl-gain) warm-starts the "
        "model with a short behavioural cloning, then shows what GRPO adds; --recipe full-cloning clones for two "
        "epochs instead. Flags given explicitly override the recipe's values.",
    )
    defaults = DemoSettings()
    helps = {
        "recipe": "rl-gain (a partial warm start, then GRPO: each stage's own gain) or full-cloning (2 SFT "
        "epochs that already solve the held-out games, then 4 GRPO steps)",
        "out": "output folder (report.md, PNGs, trajectories.html, and one folder per stage: eval/, sft/ and the RL stage's)",
        "env_id": "env to train and evaluate on",
        "env_kwargs": "JSON keyword arguments of the env family (the demo sets n_games and split)",
        "model": "model to train: default (SmolLM2-135M-Instruct), tiny, or hf:PATH_OR_ID",
        "train_games": "games of the train split (SFT's oracle episodes and GRPO's tasks)",
        "eval_episodes": "held-out games of the test split, one episode each, per evaluation",
        "eval_batch": "held-out episodes played at once (bounds the evaluation's memory)",
        "max_turns": "turn budget per episode",
        "max_new_tokens": "tokens per turn",
        "eval_temperature": "sampling temperature of the held-out evaluations (0 = greedy)",
        "eval_cpu_bf16": "auto, on or off: the model's held-out evaluations generate under bf16 autocast (auto: "
        "where the CPU has native bf16; the evaluation during GRPO uses the trainer's rollout engine)",
        "sft_epochs": "epochs over the oracle episodes",
        "sft_learning_rate": "learning rate of the SFT stage (LoRA)",
        "sft_batch_size": "episodes per SFT step",
        "lora_r": "LoRA rank of both training stages",
        "credit": "credit plug-in of the GRPO stage (see agentgym_suite.trainers.credit.available_credit_assigners())",
        "steps": "GRPO steps",
        "group_size": "rollouts per task (G)",
        "tasks_per_step": "tasks per GRPO step",
        "learning_rate": "learning rate of the GRPO stage (LoRA)",
        "temperature": "sampling temperature of the GRPO rollouts",
        "dynamic_sampling": "DAPO's dynamic sampling: replace groups whose rollouts all got the same return",
        "eval_every": "held-out evaluation every this many GRPO steps during training (0: none)",
        "seed": "seed of task selection, rollouts and training",
    }
    for item in fields(DemoSettings):
        flag = "--" + item.name.replace("_", "-")
        default = getattr(defaults, item.name)
        # default None: a flag the user did not give takes the recipe's value (DemoSettings.with_recipe)
        if isinstance(default, dict):
            parser.add_argument(flag, dest=item.name, default=None, help=helps[item.name])
        elif isinstance(default, bool):
            parser.add_argument(flag, dest=item.name, action=argparse.BooleanOptionalAction, default=None,
                                help=f"{helps[item.name]} (default: {'on' if default else 'off'})")
        else:
            parser.add_argument(flag, dest=item.name, type=type(default), default=None,
                                help=f"{helps[item.name]} (default: {default})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo with the parsed flags."""
    from agentgym_suite.demo.pipeline import run_demo

    given = {item.name: getattr(args, item.name) for item in fields(DemoSettings)}
    explicit = {name for name, value in given.items() if value is not None}
    if given["env_kwargs"] is not None:
        try:
            given["env_kwargs"] = json.loads(given["env_kwargs"])
        except json.JSONDecodeError as exc:
            print(f"--env-kwargs is not valid JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(given["env_kwargs"], dict):
            print('--env-kwargs must be a JSON object such as \'{"challenge": "tw-coin_collector"}\'.', file=sys.stderr)
            return 2
    try:
        settings = DemoSettings(**{k: v for k, v in given.items() if v is not None}).with_recipe(explicit)
    except ValueError as exc:
        print(f"--recipe: {exc}", file=sys.stderr)
        return 2
    values = asdict(settings)
    for name in ("steps", "group_size", "tasks_per_step", "max_turns", "max_new_tokens", "eval_episodes", "train_games",
                 "sft_batch_size", "lora_r", "eval_batch"):
        if values[name] < (2 if name == "group_size" else 1):
            print(f"--{name.replace('_', '-')} must be at least {2 if name == 'group_size' else 1}.", file=sys.stderr)
            return 2
    run_demo(settings)
    return 0

"""``agentgym demo``: the main job end to end on the embedded default model, offline, on CPU."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields

from agentgym_suite.demo.pipeline import DemoSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand with one flag per :class:`DemoSettings` field."""
    parser = subparsers.add_parser(
        "demo",
        help="evaluate the embedded model, train it (SFT on oracle episodes, then GRPO), evaluate on held-out tasks, report",
        description="Runs offline on CPU (about 10 minutes on 2 idle cores) and writes OUT/report.md.",
    )
    defaults = DemoSettings()
    helps = {
        "out": "output folder (report.md, PNGs, trajectories.html, and one folder per stage: eval/, sft/ and the RL stage's)",
        "env_id": "env to train and evaluate on",
        "env_kwargs": "JSON keyword arguments of the env family (the demo sets n_games and split)",
        "model": "model to train: default (SmolLM2-135M-Instruct), tiny, or hf:PATH_OR_ID",
        "train_games": "games of the train split (SFT's oracle episodes and GRPO's tasks)",
        "eval_episodes": "held-out games of the test split, one episode each, per evaluation",
        "max_turns": "turn budget per episode",
        "max_new_tokens": "tokens per turn",
        "eval_temperature": "sampling temperature of the held-out evaluations (0 = greedy)",
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
        "eval_every": "held-out evaluation every this many GRPO steps during training (0: none)",
        "seed": "seed of task selection, rollouts and training",
    }
    for item in fields(DemoSettings):
        flag = "--" + item.name.replace("_", "-")
        default = getattr(defaults, item.name)
        if isinstance(default, dict):
            parser.add_argument(flag, dest=item.name, default=json.dumps(default), help=helps[item.name])
        else:
            parser.add_argument(flag, dest=item.name, type=type(default), default=default,
                                help=f"{helps[item.name]} (default: {default})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo with the parsed flags."""
    from agentgym_suite.demo.pipeline import run_demo

    values = {item.name: getattr(args, item.name) for item in fields(DemoSettings)}
    try:
        values["env_kwargs"] = json.loads(values["env_kwargs"])
    except json.JSONDecodeError as exc:
        print(f"--env-kwargs is not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(values["env_kwargs"], dict):
        print('--env-kwargs must be a JSON object such as \'{"challenge": "tw-coin_collector"}\'.', file=sys.stderr)
        return 2
    for name in ("steps", "group_size", "tasks_per_step", "max_turns", "max_new_tokens", "eval_episodes", "train_games",
                 "sft_batch_size", "lora_r"):
        if values[name] < (2 if name == "group_size" else 1):
            print(f"--{name.replace('_', '-')} must be at least {2 if name == 'group_size' else 1}.", file=sys.stderr)
            return 2
    run_demo(DemoSettings(**values))
    return 0

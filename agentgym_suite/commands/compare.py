"""``agentgym compare --credit grpo,gigpo --env ID [--warm-start DIR] [--seeds 0,1,2] [budget flags]``:
credit plug-ins trained head to head and compared on the same held-out tasks
(:mod:`agentgym_suite.comparisons`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentgym_suite.comparisons.settings import PRESETS, CompareSettings

BUDGET_FLAGS: dict[str, tuple[type, str]] = {
    "steps": (int, "training steps of every method"),
    "group_size": (int, "rollouts per task (G)"),
    "tasks_per_step": (int, "tasks per training step"),
    "max_turns": (int, "turn budget per episode"),
    "max_new_tokens": (int, "tokens per turn"),
    "learning_rate": (float, "learning rate"),
    "lora_r": (int, "LoRA rank (0: full fine-tuning)"),
    "temperature": (float, "sampling temperature of the training rollouts"),
    "eval_every": (int, "held-out evaluation every this many steps (and after the last step)"),
    "eval_episodes": (int, "held-out tasks per evaluation, one episode each"),
    "eval_temperature": (float, "sampling temperature of the held-out evaluations (0 = greedy)"),
    "train_tasks": (int, "use only the first this many training tasks"),
    "sft_learning_rate": (float, "learning rate of the --warm-start sft:EPOCHS stage"),
}
"""Budget flags: ``--name`` with its type and help; unset ones keep the base config's value."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    parser = subparsers.add_parser(
        "compare",
        help="train several credit plug-ins from the same weights on the same tasks and budget, compare them on "
             "held-out tasks (Wilson intervals, McNemar against GRPO, learning curves, step time, memory)",
        description="Writes OUT/report.md. Run the same command again to resume: finished method/seed runs are kept.",
    )
    parser.add_argument("--credit", dest="methods", help="comma-separated credit plug-in names (agentgym_suite.trainers.credit."
                                                             "available_credit_assigners()) or import paths")
    parser.add_argument("--env", dest="env_id", help="env id to train and evaluate on (default: the config's)")
    parser.add_argument("--out", default="compare", help="output folder (default: compare)")
    parser.add_argument("--config", help="recipe YAML of AgentGRPOConfig fields to start from (default: the CPU "
                                         "recipe of agentgym demo)")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="a named setting; flags given override it")
    parser.add_argument("--warm-start", help="starting weights of every method: a model folder, or sft:EPOCHS for "
                                             "behavioural cloning of the oracle on the training tasks first")
    parser.add_argument("--model", help="base model: default, tiny, hf:PATH_OR_ID or a folder (default: the config's)")
    parser.add_argument("--seeds", help="comma-separated seeds (default: 0)")
    parser.add_argument("--env-kwargs", help="JSON env kwargs merged over the config's (training tasks)")
    parser.add_argument("--eval-env-kwargs", help="JSON env kwargs of the held-out tasks, merged over the config's")
    parser.add_argument("--teacher-context", choices=("skills", "oracle", "env_response"),
                        help="privileged text of methods with a teacher pass")
    parser.add_argument("--dynamic-sampling", action=argparse.BooleanOptionalAction, default=None,
                        help="DAPO's dynamic sampling for every method")
    parser.add_argument("--async-rollouts", "--async", dest="async_rollouts", action=argparse.BooleanOptionalAction,
                        default=None, help="asynchronous rollouts for every method (docs/training.md); methods that "
                                           "cannot train under async are refused with the reason")
    for name, (kind, text) in BUDGET_FLAGS.items():
        parser.add_argument("--" + name.replace("_", "-"), type=kind, help=text)
    parser.set_defaults(func=run)


def settings_from(args: argparse.Namespace) -> CompareSettings:
    """The settings of the parsed flags (a preset fills the flags not given)."""
    values: dict[str, Any] = {}
    for name in ("env_id", "out", "config", "preset", "warm_start", "model", "teacher_context", "dynamic_sampling",
                 "async_rollouts", *BUDGET_FLAGS):
        value = getattr(args, name)
        if value is not None:
            values[name] = value
    if args.methods is not None:
        values["methods"] = [m.strip() for m in args.methods.split(",") if m.strip()]
    if args.seeds is not None:
        try:
            values["seeds"] = [int(s) for s in args.seeds.split(",") if s.strip()]
        except ValueError:
            raise ValueError(f"--seeds {args.seeds!r}: write comma-separated integers, e.g. 0,1,2.") from None
    for name in ("env_kwargs", "eval_env_kwargs"):
        text = getattr(args, name)
        if text is not None:
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"--{name.replace('_', '-')} is not valid JSON: {exc}") from None
            if not isinstance(loaded, dict):
                raise ValueError(f"--{name.replace('_', '-')} must be a JSON object, e.g. '{{\"split\": \"test\"}}'.")
            values[name] = loaded
    explicit = set(values)
    settings = CompareSettings(**values).with_preset(explicit)
    if "methods" not in explicit and settings.preset is None and args.methods is None:
        raise ValueError("--credit is required (a comma list of credit plug-in names), unless a --preset names the methods.")
    return settings


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the comparison."""
    from agentgym_suite.comparisons.runner import run_compare

    try:
        settings = settings_from(args)
        run_compare(settings)
    except (ValueError, FileNotFoundError) as err:
        print(f"agentgym compare: {err}", file=sys.stderr)
        return 2
    return 0

"""``agentgym fidelity``: how closely a world model reproduces a real tool env (EnvACE's report).

The rehearsal package's evaluation extension adds this subcommand
(:meth:`~agentgym_suite.methods.envace.eval_extension.RehearsalEvalExtension.add_commands`); the
command line lends it the model-call flags, their routing and accounting, and agents made from
specs (:class:`~agentgym_suite.core.eval_extensions.CommandKit`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import gymnasium as gym

from agentgym_suite.core.errors import AgentGymError
from agentgym_suite.core.eval_extensions import CommandKit


def register(subparsers: Any, kit: CommandKit) -> None:
    """Add the ``fidelity`` subcommand to ``subparsers`` (what ``ArgumentParser.add_subparsers`` returns;
    ``kit``: the command line's services for its run)."""
    parser = subparsers.add_parser(
        "fidelity",
        help="replay the same caller actions in a tool env and in a world model; compare per tool",
        description=(
            "Plays --episodes tasks of BASE_ID with the oracle (and --caller models) in the real env, replays the same "
            "actions in the rehearsal env (the world model answers every tool call) with --world-model, and reports per tool: format-valid rate, JSON-key "
            "agreement and exact-value agreement of the replay, the same three for the teacher-forced one-step "
            "answers (tf_*: the simulator asked on the real history), and the agreement of the real env's own "
            "success check on the real run and on the rehearsed run's actions. Writes fidelity.json and fidelity.png to --out."
        ),
    )
    parser.add_argument("base_id", metavar="BASE_ID", help="a registered tool env id (see `agentgym list`)")
    parser.add_argument("--world-model", required=True, metavar="SPEC",
                        help="real | tiny | default | hf:PATH | vllm:PATH | openai:MODEL@URL")
    parser.add_argument("--episodes", type=int, default=5, help="number of tasks (default 5)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument("--env-kwargs", default="{}", metavar="JSON", help="JSON object of kwargs for the base env")
    parser.add_argument("--caller", action="append", default=[], metavar="SPEC",
                        help="also replay this model's actions (tiny, default, hf:PATH, ...); repeatable")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task selection and the episodes")
    parser.add_argument("--max-turns", type=int, default=30, help="most caller actions per episode")
    parser.add_argument("--max-new-tokens", type=int, default=None,
                        help="simulator tokens per tool call (default: the evaluation sampling profile's, 128)")
    parser.add_argument("--json", action="store_true", help="print fidelity.json instead of a table")
    kit.add_model_call_flags(parser)
    parser.set_defaults(func=lambda args: run(args, kit))


def print_table(per_tool: dict[str, dict[str, float]], title: str) -> None:
    """Print the per-tool metrics as a table."""
    from rich.console import Console
    from rich.table import Table

    from agentgym_suite.methods.envace.fidelity import METRICS

    table = Table(title=title)
    for column in ("tool", "calls", "episodes", *METRICS):
        table.add_column(column, justify="left" if column == "tool" else "right", no_wrap=True)
    for tool, row in per_tool.items():
        cells = ["-" if math.isnan(row[m]) else f"{row[m]:.3f}" for m in METRICS]
        table.add_row(tool, str(row["calls"]), str(row["episodes"]), *cells)
    Console(width=max(Console().width, 200)).print(table)  # ten columns: never squeeze the headers


def run(args: argparse.Namespace, kit: CommandKit) -> int:
    """Run the comparison, write the files and print the table."""
    from agentgym_suite.methods.envace.fidelity import run_fidelity, write_report

    try:
        kwargs = json.loads(args.env_kwargs)
        if not isinstance(kwargs, dict):
            raise ValueError("--env-kwargs must be a JSON object such as '{\"category\": \"simple\"}'.")
        if args.episodes < 1 or args.max_turns < 1 or (args.max_new_tokens is not None and args.max_new_tokens < 1):
            raise ValueError("--episodes, --max-turns and --max-new-tokens must be >= 1.")
        with kit.model_calls(args, args.out) as routed:  # the world model's calls
            report = run_fidelity(
                args.base_id, args.world_model, episodes=args.episodes, base_env_kwargs=kwargs,
                callers=["oracle", *args.caller], seed=args.seed, max_turns=args.max_turns, make_caller=kit.make_agent,
                sampling=None if args.max_new_tokens is None else {"max_new_tokens": args.max_new_tokens},
            )
        json_path, png_path = write_report(report, args.out)
    except json.JSONDecodeError as exc:
        print(f"agentgym fidelity: --env-kwargs is not valid JSON ({exc.msg}).", file=sys.stderr)
        return 2
    except (AgentGymError, ValueError, TypeError, KeyError, ImportError, gym.error.Error) as exc:
        print(f"agentgym fidelity: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json_path.read_text(encoding="utf-8"))
    else:
        print_table(report.per_tool, f"fidelity of {report.world_model} on {report.base_env}")
        routed.print_accounting()
        print(f"wrote {json_path} and {png_path}")
    return 0


__all__ = ["print_table", "register", "run"]

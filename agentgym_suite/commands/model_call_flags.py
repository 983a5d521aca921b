"""``agentgym eval``'s flags for the model-played roles: ``--model-cache``, ``--no-model-cache``, ``--prices``, ``--rescore``."""

from __future__ import annotations

import argparse
from typing import Any


def add_model_call_flags(parser: argparse.ArgumentParser, *, rescore: bool = True) -> None:
    """Add the model-cache and prices flags (and, with ``rescore``, ``--rescore``) to a command's parser."""
    group = parser.add_argument_group(
        "model-played roles (simulated users, judges, world models)",
        "Every call of a model playing a part of the benchmark is cached (SQLite, safe for concurrent runs) and "
        "accounted for per role (summary.json's model_calls, and a table).",
    )
    group.add_argument("--model-cache", default=None, metavar="DIR",
                       help="folder of the roles' answer cache (default: model-cache/ beside --out, shared by runs "
                            "side by side); a re-run with the same settings replays the answers at no cost")
    group.add_argument("--no-model-cache", action="store_true", help="ask the models every time (calls are still counted)")
    group.add_argument("--prices", default=None, metavar="FILE",
                       help='JSON prices per model in USD per million tokens, e.g. {"gpt-4o-mini": {"prompt": 0.15, '
                            '"completion": 0.6}}: adds a cost per role')
    if not rescore:
        return
    group.add_argument("--rescore", default=None, metavar="RUN_DIR",
                       help="score a finished run's transcripts again into --out: the recorded actions are replayed, "
                            "the user answers from the model cache, and the judge (--judge another one to compare "
                            "judges) scores them; the summary's 'rescore' says which judge scored what")


def model_call_options(args: argparse.Namespace) -> dict[str, Any]:
    """``evaluate`` keyword arguments of the flags (``model_cache``, ``prices``)."""
    from agentgym_suite.evaluation.model_accounting import load_prices

    if getattr(args, "rescore", None) is not None and getattr(args, "sweep", None) is not None:
        raise ValueError("--rescore rescores one run; rescore each variant's folder of a sweep on its own.")
    if args.no_model_cache and args.model_cache is not None:
        raise ValueError("--model-cache and --no-model-cache contradict each other; give one.")
    return {"model_cache": None if args.no_model_cache else (args.model_cache or "auto"),
            "prices": load_prices(args.prices) if args.prices else None}


def print_model_calls(out_dir: Any, invocation: str, prices: dict[str, dict[str, float]] | None) -> dict[str, Any]:
    """Print the accounting table of the roles' calls recorded under ``out_dir`` and return the accounting."""
    from rich.console import Console

    from agentgym_suite.evaluation.model_accounting import account, model_calls_table

    accounting = account(out_dir, invocation, prices)
    table = model_calls_table({"model_calls": accounting})
    if table is not None:
        Console().print(table)
    return accounting


def run_rescore(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """Rescore ``--rescore RUN_DIR`` into ``--out`` (flags that choose how to play, such as --agent, are the run's own)."""
    from agentgym_suite.evaluation.rescore import rescore

    return rescore(args.env_id, args.rescore, args.out, judge=args.judge, model_cache=options["model_cache"],
                   prices=options["prices"], progress=not args.no_progress)


__all__ = ["add_model_call_flags", "model_call_options", "print_model_calls", "run_rescore"]

"""``agentgym eval``'s flags for the model-played roles: ``--model-cache``, ``--no-model-cache``, ``--prices``, ``--rescore``."""

from __future__ import annotations

import argparse
from typing import Any


def add_model_call_flags(parser: argparse.ArgumentParser) -> None:
    """Add the model-cache, prices and rescore flags to ``agentgym eval``'s parser."""
    group = parser.add_argument_group(
        "model-played roles (simulated users, judges, world models)",
        "Every call of a model playing a part of the benchmark is cached (SQLite, safe for concurrent runs) and "
        "accounted for per role in summary.json's model_calls and the results table.",
    )
    group.add_argument("--model-cache", default=None, metavar="DIR",
                       help="folder of the roles' answer cache (default: model-cache/ beside --out, shared by runs "
                            "side by side); a re-run with the same settings replays the answers at no cost")
    group.add_argument("--no-model-cache", action="store_true", help="ask the models every time (calls are still counted)")
    group.add_argument("--prices", default=None, metavar="FILE",
                       help='JSON prices per model in USD per million tokens, e.g. {"gpt-4o-mini": {"prompt": 0.15, '
                            '"completion": 0.6}}: adds a cost per role')
    group.add_argument("--rescore", default=None, metavar="RUN_DIR",
                       help="score a finished run's transcripts again into --out: the recorded actions are replayed, "
                            "the user answers from the model cache, and the judge (--judge another one to compare "
                            "judges) scores them; the summary's 'rescore' says which judge scored what")


def model_call_options(args: argparse.Namespace) -> dict[str, Any]:
    """``evaluate`` keyword arguments of the flags (``model_cache``, ``prices``)."""
    from agentgym_suite.evaluation.model_accounting import load_prices

    if args.rescore is not None and getattr(args, "sweep", None) is not None:
        raise ValueError("--rescore rescores one run; rescore each variant's folder of a sweep on its own.")
    if args.no_model_cache and args.model_cache is not None:
        raise ValueError("--model-cache and --no-model-cache contradict each other; give one.")
    return {"model_cache": None if args.no_model_cache else (args.model_cache or "auto"),
            "prices": load_prices(args.prices) if args.prices else None}


def run_rescore(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """Rescore ``--rescore RUN_DIR`` into ``--out`` (flags that choose how to play, such as --agent, are the run's own)."""
    from agentgym_suite.evaluation.rescore import rescore

    return rescore(args.env_id, args.rescore, args.out, judge=args.judge, model_cache=options["model_cache"],
                   prices=options["prices"], progress=not args.no_progress)


__all__ = ["add_model_call_flags", "model_call_options", "run_rescore"]

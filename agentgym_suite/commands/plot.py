"""``agentgym plot``: a PNG of success rate per env across eval runs and training steps."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``plot`` subcommand."""
    parser = subparsers.add_parser(
        "plot",
        help="plot success rate per env across eval runs / training steps to a PNG",
        description=(
            "Reads DIR/summary.json (one eval run), DIR/step_N/summary.json (eval per training step) "
            "and DIR/metrics.jsonl (lines with 'step' and 'success_rate' or 'eval/<ENV>/success_rate')."
        ),
    )
    parser.add_argument("run_dirs", nargs="+", metavar="DIR", help="eval or training output directories")
    parser.add_argument("--out", required=True, metavar="PNG", help="output image file")
    parser.add_argument("--title", default="success rate", help="figure title")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the figure and print its path."""
    from agentgym_suite.evaluation.plotting import plot_runs

    try:
        path = plot_runs(args.run_dirs, args.out, title=args.title)
    except (FileNotFoundError, OSError) as exc:
        print(f"agentgym plot: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0

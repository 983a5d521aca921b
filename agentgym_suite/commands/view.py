"""``agentgym view``: write a static HTML page for browsing an evaluation's episodes."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``view`` subcommand."""
    parser = subparsers.add_parser(
        "view",
        help="write a self-contained HTML viewer of an eval directory's trajectories",
        description="Open the page in any browser; preset filters with view.html#status=lost&q=TEXT.",
    )
    parser.add_argument("run_dir", metavar="DIR", help="directory written by `agentgym eval`")
    parser.add_argument("--out", default=None, metavar="FILE", help="output HTML file (default: DIR/view.html)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the page and print its path."""
    from agentgym_suite.evaluation.viewer import write_viewer

    try:
        path = write_viewer(args.run_dir, args.out)
    except (FileNotFoundError, OSError) as exc:
        print(f"agentgym view: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0

"""``agentgym list``: every env id, one line each, and whether it can run here."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from agentgym_suite.registration import ENV_ENTRIES, missing_requirements


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``list`` subcommand."""
    parser = subparsers.add_parser("list", help="list the env ids and whether their backend and data are available")
    parser.add_argument("--plain", action="store_true", help="print 'ID<TAB>status<TAB>summary' lines instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one line per env id."""
    rows = []
    for item in ENV_ENTRIES:
        missing = missing_requirements(item)
        status = "ready" if not missing else "missing: " + "; ".join(missing)
        rows.append((item.id, status, item.summary))
    if args.plain:
        for row in rows:
            print("\t".join(row))
        return 0
    table = Table(title="agentgym-suite environments")
    for column in ("id", "status", "what"):
        table.add_column(column, overflow="fold")
    for env_id, status, summary in rows:
        table.add_row(env_id, f"[green]{status}[/]" if status == "ready" else f"[yellow]{status}[/]", summary)
    Console().print(table)
    return 0

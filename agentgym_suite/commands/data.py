"""``agentgym data``: where benchmark data lives, fetching it, and verifying it."""

from __future__ import annotations

import argparse
import sys

from agentgym_suite.core.data import DATA_ENV_VAR, data_dir
from agentgym_suite.core.data_sources import DataSource
from agentgym_suite.core.errors import AgentGymError

BENCHMARK_HELP = "benchmark name, e.g. alfworld or tau2 (an unknown name lists the known ones)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``data`` subcommand and its actions."""
    parser = subparsers.add_parser("data", help="show, fetch or verify benchmark data")
    actions = parser.add_subparsers(dest="data_action", metavar="ACTION")
    where = actions.add_parser("where", help=f"print the data directory (${DATA_ENV_VAR} or the user cache dir)")
    where.set_defaults(func=run_where)
    fetch = actions.add_parser("fetch", help="download a benchmark's official files and verify their checksums")
    fetch.add_argument("benchmark", help=BENCHMARK_HELP)
    fetch.add_argument("--timeout", type=float, default=30.0, help="seconds per download before giving up")
    fetch.set_defaults(func=run_fetch)
    verify = actions.add_parser("verify", help="check present files against their published git blob ids")
    verify.add_argument("benchmark", help=BENCHMARK_HELP)
    verify.set_defaults(func=run_verify)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def run_where(args: argparse.Namespace) -> int:
    """Print the data directory."""
    print(data_dir())
    return 0


def _source(command: str, name: str) -> DataSource | None:
    """The data source named ``name``; prints the known names and returns None when there is none."""
    from agentgym_suite.registration import data_sources

    sources = data_sources()
    if name not in sources:
        print(f"agentgym data {command}: unknown benchmark {name!r}; choose one of: {', '.join(sorted(sources))}.",
              file=sys.stderr)
        return None
    return sources[name]


def run_fetch(args: argparse.Namespace) -> int:
    """Download and verify one benchmark."""
    from agentgym_suite.core.fetch import fetch

    source = _source("fetch", args.benchmark)
    if source is None:
        return 2
    from agentgym_suite.core.fetch import manual_instructions

    for line in manual_instructions(source):
        print(line)
    try:
        written = fetch(source, timeout=args.timeout)
    except AgentGymError as exc:
        print(f"agentgym data fetch {args.benchmark}: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} file(s) written under {data_dir() / args.benchmark}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """Verify one benchmark's present files."""
    from agentgym_suite.core.fetch import verify

    source = _source("verify", args.benchmark)
    if source is None:
        return 2
    try:
        report = verify(source)
    except AgentGymError as exc:
        print(f"agentgym data verify {args.benchmark}: {exc}", file=sys.stderr)
        return 1
    for rel, status in report.items():
        print(f"{status:8} {rel}")
    if not report:
        print(f"no published checksums for {args.benchmark}. {source.note}".strip())
    return 0 if all(s == "ok" for s in report.values()) else 1

"""The ``agentgym`` command. Each subcommand lives in ``agentgym_suite/commands/<name>.py``
and exposes ``register(subparsers)`` (adds its parser, sets ``func``)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

COMMANDS = ("list", "play", "eval", "view", "plot", "data", "train", "serve", "demo", "compare", "conformance")
"""Subcommand modules, in the order ``agentgym --help`` shows them; the subcommands methods bring
(EnvACE's ``fidelity``, a plug-in's own) follow (:mod:`agentgym_suite.commands.extension_commands`)."""

EXTENSION_COMMANDS = "agentgym_suite.commands.extension_commands"
"""The module that adds the declared extensions' subcommands (imported by name, as the others are)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``agentgym`` argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="agentgym",
        description="LLM-agent benchmarks as Gymnasium text environments: list, play, evaluate, train.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module_name = f"agentgym_suite.commands.{'list_envs' if name == 'list' else name}"
        if importlib.util.find_spec(module_name) is None:
            continue
        importlib.import_module(module_name).register(subparsers)
    importlib.import_module(EXTENSION_COMMANDS).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentgym``; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from agentgym_suite.core.interrupts import EXIT_CODE, pending, stop_on_interrupt

    with stop_on_interrupt():  # Ctrl-C stops the command even where a library swallows it (core.interrupts)
        try:
            code = int(args.func(args) or 0)
            if pending():  # a Ctrl-C that something swallowed: the run still stopped early or ran on
                raise KeyboardInterrupt
            return code
        except KeyboardInterrupt:
            print("interrupted (Ctrl-C); what finished is written, a rerun of an evaluation resumes it",
                  file=sys.stderr)
            return EXIT_CODE


if __name__ == "__main__":
    sys.exit(main())

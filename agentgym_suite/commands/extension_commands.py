"""The subcommands methods bring (``EvalExtension.add_commands``), and the services their runs use.

A method's package sits below the command line, so its subcommand cannot import the command
line's helpers; :class:`Kit` hands them over (:class:`~agentgym_suite.core.eval_extensions.CommandKit`):
the model-call flags, routing the model-played roles through the cache and ledger with the
accounting table after, and agents made from specs. ``agentgym``'s parser calls :func:`register`
after its own subcommands.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agentgym_suite.commands.model_call_flags import add_model_call_flags, model_call_options, print_model_calls
from agentgym_suite.core.eval_extensions import CommandExtension
from agentgym_suite.evaluation.extensions import eval_extensions


@dataclass
class _Routed:
    """One run's routed calls: where they were recorded and what prices apply."""

    out_dir: Any
    invocation: str
    prices: dict[str, dict[str, float]] | None

    def print_accounting(self) -> dict[str, Any]:
        """Print the per-role accounting table and return the accounting."""
        return print_model_calls(self.out_dir, self.invocation, self.prices)


class Kit:
    """The command line's services for a method's subcommand (:class:`~agentgym_suite.core.eval_extensions.CommandKit`)."""

    def add_model_call_flags(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--model-cache``, ``--no-model-cache`` and ``--prices``."""
        add_model_call_flags(parser, rescore=False)

    @contextmanager
    def model_calls(self, args: argparse.Namespace, out_dir: Any) -> Iterator[_Routed]:
        """Route the roles' calls through the cache and ledger the flags choose (ledger under ``out_dir``)."""
        from agentgym_suite.evaluation.model_accounting import call_settings
        from agentgym_suite.llm.role_client import model_calls

        options = model_call_options(args)
        with model_calls(call_settings(out_dir, options["model_cache"])) as invocation:
            yield _Routed(out_dir, invocation, options["prices"])

    def make_agent(self, spec: Any, *, seed: int) -> Any:
        """An agent from a spec (see :func:`~agentgym_suite.evaluation.agent_specs.make_agent`)."""
        from agentgym_suite.evaluation.agent_specs import make_agent

        return make_agent(spec, seed=seed)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the subcommands of every declared extension that brings some."""
    kit = Kit()
    for extension in eval_extensions():
        if isinstance(extension, CommandExtension):
            extension.add_commands(subparsers, kit)


__all__ = ["Kit", "register"]

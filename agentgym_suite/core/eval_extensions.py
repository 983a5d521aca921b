"""The extension point of ``agentgym eval``: a method that changes how an agent is evaluated.

A method may bring its own way of evaluating an agent (e.g. it wraps the agent in one that
tries each task against a world model first). Such a method writes an
:class:`EvalExtension` in its own home and declares it; the generic layers (the eval runner, the
``agentgym eval`` command) ask every declared extension and never name one:

* the command adds each extension's flags (:meth:`EvalExtension.add_arguments`) and reads its
  options back (:meth:`EvalExtension.options_from_args`: ``None`` when the flags leave it off);
* :func:`~agentgym_suite.evaluation.runner.evaluate` takes ``extensions={name: options}``, writes
  the options into ``config.json`` under the extension's :attr:`~EvalExtension.name` (a resumed
  run must share them), wraps the agent (:meth:`EvalExtension.wrap_agent`) and puts the
  extension's :meth:`~EvalExtension.summary` of the players into ``summary.json`` under its name.

An extension may also bring whole subcommands of its own (EnvACE's ``agentgym fidelity``): a
method ``add_commands(subparsers, kit)`` (:class:`CommandExtension`). The ``agentgym`` parser calls
it with a :class:`CommandKit`, the command-line services a method package (on a lower floor than
the command line) cannot import: the model-call flags and their accounting, and agents made from
specs.

Declaring one: an entry point of group :data:`~agentgym_suite.core.plugins.EVAL_GROUP`, in a method
package's ``ENTRY_POINTS`` (the suite's own) or a distribution's ``pyproject.toml`` (outside the
suite); an env entry may also name one (``EnvEntry(eval_extension="module:attribute")``). Either way the attribute is an
object with this protocol (an instance, not a class).
:func:`~agentgym_suite.evaluation.extensions.eval_extensions` lists them.
"""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable


@runtime_checkable
class EvalExtension(Protocol):
    """One method's addition to evaluation: command-line flags, an agent wrapper and a summary."""

    name: str
    """Key of the extension's options in ``config.json`` and ``evaluate(extensions=...)``, and of its
    part of ``summary.json``; unique among the declared extensions."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the extension's flags to the ``agentgym eval`` parser (their names must not clash with the command's)."""

    def options_from_args(self, args: argparse.Namespace) -> dict[str, Any] | None:
        """The extension's options from the parsed flags, or ``None`` when they leave it off.

        Raises:
            ValueError: a flag's value is out of range (the message names the flag).
        """

    def wrap_agent(self, agent: Any, options: Mapping[str, Any]) -> Any:
        """The agent the episodes are played with: ``agent`` wrapped as ``options`` say."""

    def summary(self, agents: Sequence[Any]) -> dict[str, Any] | None:
        """What ``summary.json`` reports under :attr:`name`, from the wrapped agents that played
        (one per parallel copy); ``None`` for nothing."""


class RoutedCalls(Protocol):
    """The model-played roles' calls of one command run, routed through the cache and the ledger."""

    def print_accounting(self) -> dict[str, Any]:
        """Print the per-role accounting table of the run's calls and return the accounting."""


class CommandKit(Protocol):
    """The command line's services for a method's own subcommand."""

    def add_model_call_flags(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--model-cache``, ``--no-model-cache`` and ``--prices`` to the subcommand's parser."""

    def model_calls(self, args: argparse.Namespace, out_dir: Any) -> AbstractContextManager[RoutedCalls]:
        """Route the model-played roles' calls made inside the block through the cache and ledger the
        flags choose (a ledger under ``out_dir``).

        Raises:
            ValueError: contradicting flags or an unreadable prices file (the message names the flag).
        """

    def make_agent(self, spec: Any, *, seed: int) -> Any:
        """An agent from a spec (``oracle``, ``tiny``, ``hf:PATH``...; an agent object is returned as it is)."""


@runtime_checkable
class CommandExtension(Protocol):
    """An extension that also adds subcommands to ``agentgym`` (optional besides :class:`EvalExtension`)."""

    def add_commands(self, subparsers: Any, kit: CommandKit) -> None:
        """Add the subcommands (``subparsers.add_parser(...)``, each setting ``func``); ``kit`` serves their runs."""


__all__ = ["CommandExtension", "CommandKit", "EvalExtension", "RoutedCalls"]

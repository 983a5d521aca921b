"""The declared evaluation extensions, found the way envs and plug-ins are found.

:func:`eval_extensions` lists every :class:`~agentgym_suite.core.eval_extensions.EvalExtension`:
first those the registration entries name (``EnvEntry.eval_extension``, in entry order), then those
the suite's method packages and other installed distributions declare in the entry-point group
:data:`~agentgym_suite.core.plugins.EVAL_GROUP` (:func:`~agentgym_suite.core.plugins.declared`). The eval runner and ``agentgym eval`` ask these,
never a method by name. An extension that fails to load, lacks the protocol, or reuses a name is
warned about and skipped, so one broken extension never stops an evaluation.
"""

from __future__ import annotations

import argparse
import importlib
import warnings
from typing import Any, Mapping

from agentgym_suite.core import plugins
from agentgym_suite.core.eval_extensions import EvalExtension
from agentgym_suite.registration import all_entries


def eval_extensions() -> tuple[EvalExtension, ...]:
    """Every declared evaluation extension, the suite's own first; names are unique."""
    found: dict[str, EvalExtension] = {}
    for item in all_entries():
        if not item.eval_extension:
            continue
        try:
            module, _, attribute = item.eval_extension.partition(":")
            value = getattr(importlib.import_module(module), attribute or "EXTENSION")
        except Exception as err:  # noqa: BLE001 - a broken extension is reported, never fatal
            warnings.warn(f"{item.id}: its eval_extension {item.eval_extension!r} cannot be loaded and is skipped: "
                          f"{type(err).__name__}: {err}.", stacklevel=2)
            continue
        _add(found, value, f"{item.id}'s eval_extension {item.eval_extension!r}")
    for plugin in plugins.declared(plugins.EVAL_GROUP):
        _add(found, plugin.obj, f"entry point {plugin.name!r} of {plugin.distribution!r} (group {plugins.EVAL_GROUP!r})")
    return tuple(found.values())


def _add(found: dict[str, EvalExtension], value: Any, origin: str) -> None:
    if not isinstance(value, EvalExtension) or isinstance(value, type):
        warnings.warn(f"{origin} gives {type(value).__name__}, not an EvalExtension instance "
                      "(name, add_arguments, options_from_args, wrap_agent, summary); it is skipped.", stacklevel=3)
        return
    name = str(value.name)
    if name in found:
        if found[name] is not value:
            warnings.warn(f"{origin}: an eval extension named {name!r} is already declared; it is skipped. "
                          "Give it another name.", stacklevel=3)
        return
    found[name] = value


def extension_names() -> tuple[str, ...]:
    """The names of the declared extensions (the ``config.json`` keys a resumed run must share)."""
    return tuple(extension.name for extension in eval_extensions())


def add_extension_arguments(parser: argparse.ArgumentParser) -> None:
    """Add every declared extension's flags to the ``agentgym eval`` parser."""
    for extension in eval_extensions():
        extension.add_arguments(parser)


def extension_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``{name: options}`` of the extensions the parsed flags turn on (for ``evaluate(extensions=...)``).

    Raises:
        ValueError: an extension's flag is out of range (the message names the flag).
    """
    chosen: dict[str, dict[str, Any]] = {}
    for extension in eval_extensions():
        options = extension.options_from_args(args)
        if options is not None:
            chosen[extension.name] = dict(options)
    return chosen


def active_extensions(options: Mapping[str, Mapping[str, Any]] | None) -> list[tuple[EvalExtension, dict[str, Any]]]:
    """The extensions ``options`` (``{name: options}``) turns on, in declaration order, with their options.

    Raises:
        ValueError: a name no declared extension has (the message lists the declared ones).
    """
    if not options:
        return []
    declared = {extension.name: extension for extension in eval_extensions()}
    unknown = sorted(set(options) - set(declared))
    if unknown:
        raise ValueError(f"unknown eval extension(s) {unknown}; declared: {sorted(declared) or 'none'}.")
    return [(declared[name], dict(options[name])) for name in declared if name in options]


__all__ = ["active_extensions", "add_extension_arguments", "eval_extensions", "extension_names", "extension_options"]

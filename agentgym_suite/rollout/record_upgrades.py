"""Upgrades of trajectory records written in an earlier layout: how a package keeps its old files readable.

The record loader (:meth:`agentgym_suite.rollout.records.Trajectory.from_dict`, so
:func:`~agentgym_suite.rollout.records.read_trajectories` and every reader of ``trajectories.jsonl``)
first brings a line to the current generic layout itself, then runs every declared upgrade on it,
in the order :func:`record_upgrades` lists them. An upgrade is a function that takes one record
dict (a copy the loader owns) and returns it in the current layout; one that finds nothing of its
own to change returns the record as it is. A key the loader does not know is dropped when the
record is built, so a package whose records once kept data under a key of its own registers an
upgrade that moves that data to where the loader reads it (e.g. into the turn's generic
``role_generations``), instead of losing it.

Upgrades are declared, never named here:

* in the ``agentgym_suite.record_upgrades`` entry-point group of an installed distribution
  (:data:`~agentgym_suite.core.plugins.RECORD_UPGRADES_GROUP`), or of one of the suite's own method
  packages (their ``ENTRY_POINTS``, :func:`~agentgym_suite.core.plugins.suite_methods`);
* or at run time with :func:`register_record_upgrade` (a script's own older files).

An upgrade that raises, or returns something other than a dict, stops the load with a
``ValueError`` naming the upgrade and the record: a record is never half-read in silence.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentgym_suite.core import plugins

RecordUpgrade = Callable[[dict[str, Any]], dict[str, Any]]
"""A function from one trajectory record dict (older layout) to the same record in the current layout."""


@dataclass(frozen=True)
class DeclaredUpgrade:
    """One upgrade the loader runs, with where it was declared (for error messages)."""

    name: str
    origin: str
    upgrade: RecordUpgrade


_REGISTERED: list[DeclaredUpgrade] = []
_CACHE: dict[tuple[Any, ...], tuple[DeclaredUpgrade, ...]] = {}


def register_record_upgrade(name: str, upgrade: RecordUpgrade) -> None:
    """Add ``upgrade`` to the ones the loader runs, after the declared ones (idempotent for the same
    function under the same name).

    Raises:
        TypeError: ``upgrade`` is not callable.
        ValueError: another upgrade is already registered under ``name``.
    """
    if not callable(upgrade):
        raise TypeError(f"record upgrade {name!r} must be a function record -> record, got {type(upgrade).__name__}.")
    for known in _REGISTERED:
        if known.name == name:
            if known.upgrade is upgrade:
                return
            raise ValueError(f"a record upgrade named {name!r} is already registered; pick another name.")
    _REGISTERED.append(DeclaredUpgrade(name, "register_record_upgrade", upgrade))
    _CACHE.clear()


def unregister_record_upgrade(name: str) -> None:
    """Remove the upgrade :func:`register_record_upgrade` added under ``name`` (no error when none is)."""
    _REGISTERED[:] = [known for known in _REGISTERED if known.name != name]
    _CACHE.clear()


def record_upgrades() -> tuple[DeclaredUpgrade, ...]:
    """Every upgrade the loader runs: the suite's method packages', then installed distributions'
    (both from the entry-point group), then those registered at run time. A declared value that is
    not callable is warned about and skipped."""
    key = (tuple(sys.path), len(_REGISTERED))
    if key not in _CACHE:
        found: list[DeclaredUpgrade] = []
        group = plugins.RECORD_UPGRADES_GROUP
        for plugin in plugins.declared(group):
            if not callable(plugin.obj):
                plugins.warn_skipped(plugin, group, f"it loads {type(plugin.obj).__name__}, not a function "
                                                    "record -> record.")
                continue
            found.append(DeclaredUpgrade(plugin.name, f"{plugin.distribution} ({plugin.value})", plugin.obj))
        _CACHE.clear()
        _CACHE[key] = (*found, *_REGISTERED)
    return _CACHE[key]


def upgraded_record(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` after every declared upgrade (each gets the previous one's result).

    Raises:
        ValueError: an upgrade raised or returned something other than a dict (the message names it).
    """
    for declared in record_upgrades():
        try:
            result = declared.upgrade(data)
        except Exception as err:  # noqa: BLE001 - reported with the upgrade's name, never swallowed
            raise ValueError(f"record upgrade {declared.name!r} of {declared.origin} failed on the record of task "
                             f"{data.get('task_id')!r}: {type(err).__name__}: {err}. Fix the record or the upgrade.") \
                from err
        if not isinstance(result, dict):
            raise ValueError(f"record upgrade {declared.name!r} of {declared.origin} returned "
                             f"{type(result).__name__}, not the record dict.")
        data = result
    return data


__all__ = ["DeclaredUpgrade", "RecordUpgrade", "record_upgrades", "register_record_upgrade",
           "unregister_record_upgrade", "upgraded_record"]

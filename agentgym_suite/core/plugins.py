"""Plug-ins that other distributions install, found through ``importlib.metadata`` entry points.

A package outside the suite adds envs and credit plug-ins without an edit here, the way
Gymnasium's plug-in envs do (its ``gymnasium.envs`` group), by declaring entry points in its own
``pyproject.toml``::

    [project.entry-points."agentgym_suite.envs"]
    weather = "my_pkg.envs:ENTRY"              # an EnvEntry, a list of them, or a function returning either

    [project.entry-points."agentgym_suite.credit"]
    discounted_grpo = "my_pkg.credit:DiscountedGRPOCredit"   # a CreditAssigner subclass

    [project.entry-points."agentgym_suite.eval"]
    reflect = "my_pkg.eval:REFLECTION"          # an EvalExtension (core/eval_extensions.py)

    [project.entry-points."agentgym_suite.record_upgrades"]
    my_method = "my_pkg.records:upgrade_record"  # a function: an older trajectory record -> the current layout

``registration.all_entries()`` adds the envs to the suite's own (so ``gym.make``, ``agentgym list``
and ``agentgym eval`` see them), and ``trainers.credit.registry`` adds the plug-ins to its names
(so ``--credit``, ``credit:`` in a config and ``agentgym compare`` accept them), and
``evaluation.extensions`` adds the evaluation extensions to the suite's own (so ``agentgym eval``
takes their flags).

``rollout.records`` runs every record upgrade on each trajectory record it loads (so files written
in a method's earlier layout keep their data).

The suite's own method packages (``agentgym_suite/methods/<name>/``, a floor above the trainer)
are plug-ins of the same kind: each declares its entry points in its ``__init__``'s
``ENTRY_POINTS`` (group -> name -> ``"module:attribute"``, as ``pyproject.toml`` would), and
:func:`suite_methods` finds them by walking that floor, so no generic module names a method and a
source checkout needs no install for them.

The installed entry points are read again whenever ``sys.path`` changes (a folder added at run
time, as the tests do, is seen at the next call). An entry point that fails to load is reported
with a warning that names the distribution and the error, and skipped: one broken plug-in never
hides the suite's own envs or stops ``agentgym list``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import sys
import warnings
from dataclasses import dataclass
from typing import Any

ENVS_GROUP = "agentgym_suite.envs"
"""Entry-point group of env registrations (each loads an ``EnvEntry``, a list of them, or a function returning either)."""

CREDIT_GROUP = "agentgym_suite.credit"
"""Entry-point group of credit plug-ins (each loads a ``CreditAssigner`` subclass)."""

EVAL_GROUP = "agentgym_suite.eval"
"""Entry-point group of evaluation extensions (each loads an object with the
:class:`~agentgym_suite.core.eval_extensions.EvalExtension` protocol: flags of ``agentgym eval``,
an agent wrapper, a summary part)."""


RECORD_UPGRADES_GROUP = "agentgym_suite.record_upgrades"
"""Entry-point group of trajectory-record upgrades (each loads a function taking one record dict of
an older layout and returning it in the current one; :mod:`agentgym_suite.rollout.record_upgrades`)."""

METHODS_PACKAGE = "agentgym_suite.methods"
"""The floor of the suite's own method packages, walked by :func:`suite_methods`."""

SUITE_DISTRIBUTION = "agentgym-suite"
"""The distribution name :func:`suite_methods` gives its plug-ins (with the method package's name)."""


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point: its name, the distribution that declared it, and the object it loads."""

    name: str
    distribution: str
    value: str
    obj: Any


def installed(group: str) -> tuple[Plugin, ...]:
    """The entry points of ``group`` that load, in a stable order (distribution, then name); a failing
    one is warned about and skipped."""
    return _installed(group, tuple(sys.path))


@functools.lru_cache(maxsize=16)
def _installed(group: str, path: tuple[str, ...]) -> tuple[Plugin, ...]:
    """What :func:`installed` returns for one ``sys.path`` (the cache key: installs are seen when it changes)."""
    del path  # only the cache key
    found: list[Plugin] = []
    seen: set[tuple[str, str]] = set()
    for point in importlib.metadata.entry_points(group=group):
        dist = point.dist.name if point.dist is not None else "?"
        if (dist, point.name) in seen:  # the same distribution seen twice on sys.path: the first wins
            continue
        seen.add((dist, point.name))
        try:
            obj = point.load()
        except Exception as err:  # noqa: BLE001 - a broken plug-in is reported, never fatal
            warnings.warn(f"entry point {point.name!r} = {point.value!r} of distribution {dist!r} (group {group!r}) "
                          f"cannot be loaded and is skipped: {type(err).__name__}: {err}. Fix or uninstall {dist}.",
                          stacklevel=2)
            continue
        found.append(Plugin(point.name, dist, point.value, obj))
    return tuple(sorted(found, key=lambda p: (p.distribution, p.name)))


def declared(group: str) -> tuple[Plugin, ...]:
    """Every entry point of ``group``: the suite's own method packages' (:func:`suite_methods`) first, then
    other installed distributions' (:func:`installed`); the one path the registries read."""
    return (*suite_methods(group), *installed(group))


def suite_methods(group: str) -> tuple[Plugin, ...]:
    """The entry points of ``group`` that the suite's own method packages declare (each
    subpackage of :data:`METHODS_PACKAGE` with an ``ENTRY_POINTS`` mapping), loaded, in package then
    name order; one that fails to load is warned about and skipped, as :func:`installed` does."""
    found: list[Plugin] = []
    for package, declared in _method_declarations():
        for name, value in sorted(declared.get(group, {}).items()):
            origin = f"{SUITE_DISTRIBUTION} ({METHODS_PACKAGE}.{package})"
            try:
                module, _, attribute = value.partition(":")
                obj = getattr(importlib.import_module(module), attribute)
            except Exception as err:  # noqa: BLE001 - a broken method package is reported, never fatal
                warnings.warn(f"entry point {name!r} = {value!r} of {origin} (group {group!r}) cannot be loaded "
                              f"and is skipped: {type(err).__name__}: {err}.", stacklevel=2)
                continue
            found.append(Plugin(name, origin, value, obj))
    return tuple(found)


@functools.cache
def _method_declarations() -> tuple[tuple[str, dict[str, dict[str, str]]], ...]:
    """``(package name, its ENTRY_POINTS)`` of each method package under :data:`METHODS_PACKAGE`."""
    spec = importlib.util.find_spec(METHODS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return ()
    found = []
    for info in sorted(pkgutil.iter_modules(spec.submodule_search_locations), key=lambda i: i.name):
        if not info.ispkg:
            continue
        package = f"{METHODS_PACKAGE}.{info.name}"
        try:
            declared = getattr(importlib.import_module(package), "ENTRY_POINTS", {})
        except Exception as err:  # noqa: BLE001 - one broken method package never hides the others
            warnings.warn(f"method package {package} cannot be imported and is skipped: {type(err).__name__}: {err}.",
                          stacklevel=3)
            continue
        if not isinstance(declared, dict) or not all(isinstance(v, dict) for v in declared.values()):
            warnings.warn(f"{package}.ENTRY_POINTS is skipped: declare a dict of entry-point group -> "
                          "{name: 'module:attribute'}.", stacklevel=3)
            continue
        found.append((info.name, declared))
    return tuple(found)


def refresh() -> None:
    """Forget the entry points read so far (after installing a distribution into a running process)."""
    _installed.cache_clear()
    _method_declarations.cache_clear()
    importlib.invalidate_caches()


def warn_skipped(plugin: Plugin, group: str, why: str) -> None:
    """Warn that ``plugin`` loaded but is not used, and why (for the registries that check what it loads)."""
    warnings.warn(f"entry point {plugin.name!r} = {plugin.value!r} of distribution {plugin.distribution!r} "
                  f"(group {group!r}) is skipped: {why}", stacklevel=3)

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

``registration.all_entries()`` adds the envs to the suite's own (so ``gym.make``, ``agentgym list``
and ``agentgym eval`` see them), and ``trainers.credit.registry`` adds the plug-ins to its names
(so ``--credit``, ``credit:`` in a config and ``agentgym compare`` accept them), and
``evaluation.extensions`` adds the evaluation extensions to the suite's own (so ``agentgym eval``
takes their flags).

The installed entry points are read again whenever ``sys.path`` changes (a folder added at run
time, as the tests do, is seen at the next call). An entry point that fails to load is reported
with a warning that names the distribution and the error, and skipped: one broken plug-in never
hides the suite's own envs or stops ``agentgym list``.
"""

from __future__ import annotations

import functools
import importlib.metadata
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


def refresh() -> None:
    """Forget the entry points read so far (after installing a distribution into a running process)."""
    _installed.cache_clear()
    importlib.invalidate_caches()


def warn_skipped(plugin: Plugin, group: str, why: str) -> None:
    """Warn that ``plugin`` loaded but is not used, and why (for the registries that check what it loads)."""
    warnings.warn(f"entry point {plugin.name!r} = {plugin.value!r} of distribution {plugin.distribution!r} "
                  f"(group {group!r}) is skipped: {why}", stacklevel=3)

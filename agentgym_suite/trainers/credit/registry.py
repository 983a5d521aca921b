"""Credit plug-ins by name: ``get_credit_assigner("sdar", beta=0)``.

This module is the one place a plug-in is looked up by name: :func:`credit_assigner_class`
resolves a name (or an import path), and :func:`build_credit_assigner` builds the plug-in a
trainer runs from its config's ``credit``, ``credit_params`` and ``invalid_action_penalty``.

A plug-in outside the suite is found in one of two ways. An installed distribution that declares
it in the ``agentgym_suite.credit`` entry-point group (:mod:`agentgym_suite.core.plugins`) adds
its name to the registry (:func:`credit_assigners`), so ``--credit NAME`` works with no edit here.
Any importable class is also named by its import path, ``"my_pkg.my_module:MyCredit"`` (or
``"my_pkg.my_module.MyCredit"``): the module is imported and the class must derive from
:class:`~agentgym_suite.trainers.credit.base.CreditAssigner`.
"""

from __future__ import annotations

import importlib
from dataclasses import fields
from typing import Any, Iterator, Mapping

from agentgym_suite.core import plugins
from agentgym_suite.trainers.credit.agentopsd import AgentOPSDCredit
from agentgym_suite.trainers.credit.base import CreditAssigner, CreditConfig
from agentgym_suite.trainers.credit.gigpo import GiGPOCredit
from agentgym_suite.trainers.credit.grpo import DrGRPOCredit, GRPOCredit
from agentgym_suite.trainers.credit.rlsd import RLSDCredit
from agentgym_suite.trainers.credit.sdar import OPSDCredit, SDARCredit
from agentgym_suite.trainers.credit.skill_sd import SkillSDCredit
from agentgym_suite.trainers.credit.skillrise import SkillRiseCredit
from agentgym_suite.trainers.credit.vad import VADCredit

OWN_CREDIT_ASSIGNERS: dict[str, type[CreditAssigner]] = {
    cls.name: cls
    for cls in (
        GRPOCredit,
        DrGRPOCredit,
        GiGPOCredit,
        AgentOPSDCredit,
        SDARCredit,
        OPSDCredit,
        RLSDCredit,
        SkillSDCredit,
        SkillRiseCredit,
        VADCredit,
    )
}
"""The plug-ins of this package (``trainers/credit/``), by name."""


class SuiteCreditAssigners(Mapping[str, type[CreditAssigner]]):
    """Every plug-in the suite ships, by name: this package's (:data:`OWN_CREDIT_ASSIGNERS`), then
    those the suite's method packages declare in the ``agentgym_suite.credit`` group
    (:func:`~agentgym_suite.core.plugins.suite_methods`; e.g. a method package that holds an env
    and a plug-in sits above this floor, so it is found, never imported by name).

    Read on first use, not at import: a method package's plug-in module imports this package's
    base classes, so it can only be loaded once they are. A declared value that is not a
    ``CreditAssigner`` subclass, or whose ``name`` differs from its entry point's, raises ``TypeError``:
    the suite's own declarations must be right."""

    def __init__(self, own: Mapping[str, type[CreditAssigner]]) -> None:
        self._own = dict(own)
        self._all: dict[str, type[CreditAssigner]] | None = None

    def _resolved(self) -> dict[str, type[CreditAssigner]]:
        if self._all is None:
            found = dict(self._own)
            for plugin in plugins.suite_methods(plugins.CREDIT_GROUP):
                cls = plugin.obj
                if not (isinstance(cls, type) and issubclass(cls, CreditAssigner)) or cls.name != plugin.name \
                        or plugin.name in found:
                    raise TypeError(f"{plugin.distribution} declares credit plug-in {plugin.name!r} = {plugin.value!r}: "
                                    "it must be a CreditAssigner subclass whose name is the entry point's and "
                                    "taken by no other plug-in.")
                found[plugin.name] = cls
            self._all = found
        return self._all

    def __getitem__(self, name: str) -> type[CreditAssigner]:
        return self._resolved()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())

    def __repr__(self) -> str:
        return f"SuiteCreditAssigners({self._resolved()!r})"


CREDIT_ASSIGNERS: Mapping[str, type[CreditAssigner]] = SuiteCreditAssigners(OWN_CREDIT_ASSIGNERS)
"""Every plug-in class the suite ships, by name (installed plug-ins: :func:`credit_assigners`)."""

DEFAULT_CREDIT = GRPOCredit.name
"""The plug-in a training config uses unless it names one (plain group-relative credit)."""

IMPORT_PATH_EXAMPLE = "my_pkg.my_credit:MyCredit"


def plugin_credit_assigners() -> dict[str, type[CreditAssigner]]:
    """The plug-ins installed distributions declare in the ``agentgym_suite.credit`` entry-point
    group, by the entry point's name. One that loads something other than a ``CreditAssigner``
    subclass, or whose name is taken, is warned about and skipped."""
    found: dict[str, type[CreditAssigner]] = {}
    for plugin in plugins.installed(plugins.CREDIT_GROUP):
        cls = plugin.obj
        if not (isinstance(cls, type) and issubclass(cls, CreditAssigner)):
            plugins.warn_skipped(plugin, plugins.CREDIT_GROUP, f"it loads {cls!r}, not a subclass of "
                                 "agentgym_suite.trainers.credit.CreditAssigner.")
        elif plugin.name in CREDIT_ASSIGNERS or plugin.name in found:
            plugins.warn_skipped(plugin, plugins.CREDIT_GROUP, f"the name {plugin.name!r} is taken; rename the entry point.")
        else:
            if cls.name != plugin.name:
                plugins.warn_skipped(plugin, plugins.CREDIT_GROUP, f"its class's name is {cls.name!r}; "
                                     f"name the entry point {cls.name!r} so metrics and names agree.")
                continue
            found[plugin.name] = cls
    return found


def credit_assigners() -> dict[str, type[CreditAssigner]]:
    """Every plug-in by name: the suite's (:data:`CREDIT_ASSIGNERS`), then installed ones
    (:func:`plugin_credit_assigners`)."""
    return {**CREDIT_ASSIGNERS, **plugin_credit_assigners()}


def available_credit_assigners() -> list[str]:
    """Names accepted by ``get_credit_assigner``, in registration order (the suite's, then installed plug-ins')."""
    return list(credit_assigners())


def credit_assigner_class(name: str) -> type[CreditAssigner]:
    """The plug-in class for a registry name or an import path ``module:Class``.

    Raises ``ValueError`` for an unknown name (listing the known ones and saying that an import
    path works too), a module that cannot be imported, a missing attribute, or a class that is
    not a ``CreditAssigner``.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"credit plug-in name must be a non-empty string; got {name!r}.")
    known = credit_assigners()
    if name in known:
        return known[name]
    if ":" not in name and "." not in name:
        raise ValueError(
            f"unknown credit assigner {name!r}; choose one of {list(known)}, "
            f"or name your own CreditAssigner subclass by its import path, e.g. {IMPORT_PATH_EXAMPLE!r}."
        )
    module_name, _, attr = name.partition(":") if ":" in name else name.rpartition(".")
    if not module_name or not attr:
        raise ValueError(
            f"credit plug-in path {name!r} must name a module and a class, e.g. {IMPORT_PATH_EXAMPLE!r}."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(
            f"credit plug-in {name!r}: cannot import module {module_name!r} ({err}). Put it on PYTHONPATH, "
            f"or choose one of {available_credit_assigners()}."
        ) from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValueError(f"credit plug-in {name!r}: module {module_name!r} has no attribute {attr!r}.")
    if not (isinstance(cls, type) and issubclass(cls, CreditAssigner)):
        raise ValueError(
            f"credit plug-in {name!r} is {cls!r}, not a subclass of "
            "agentgym_suite.trainers.credit.CreditAssigner."
        )
    return cls


def get_credit_assigner(
    name: str, config: CreditConfig | None = None, **params: Any
) -> CreditAssigner:
    """Build the plug-in ``name`` (a registry name or an import path ``module:Class``) from a config
    object or keyword parameters.

    Raises ``ValueError`` for an unknown name (listing the known ones) or an unknown or
    invalid parameter (saying which values are accepted).
    """
    return credit_assigner_class(name)(config, **params)


def build_credit_assigner(plugin: str | type[CreditAssigner], params: Mapping[str, Any] | None = None, *,
                          invalid_action_penalty: float | None = None) -> CreditAssigner:
    """The plug-in ``plugin`` (a name or import path, or the class :func:`credit_assigner_class`
    resolved it to) with ``params``, completed from the plug-in's declarations: its
    ``trainer_defaults``, and ``invalid_action_penalty`` (the trainer's setting) when the plug-in
    has an ``invalid_penalty`` parameter but not ``own_invalid_penalty``. What ``params`` sets
    always wins. Raises ``ValueError`` as :func:`get_credit_assigner` does."""
    cls = plugin if isinstance(plugin, type) else credit_assigner_class(plugin)
    values = {**cls.trainer_defaults, **(params or {})}
    names = {f.name for f in fields(cls.config_cls)}
    if invalid_action_penalty is not None and "invalid_penalty" in names and "invalid_penalty" not in values \
            and not cls.own_invalid_penalty:
        values["invalid_penalty"] = invalid_action_penalty
    return cls(**values)

"""One evaluation sweep: ``agentgym eval ENV --sweep NAME[:ARGS]``.

A benchmark declares its sweeps beside its env (the ``sweeps()`` classmethod of
:class:`~agentgym_suite.core.text_env.TextEnv`): each :class:`Sweep` turns its ``ARGS`` into
variants (an env-kwargs overlay, or another env id, plus evaluation settings of its own) and
combines the variants' results into one aggregate. :func:`run_sweep` runs every variant as an
ordinary resumable evaluation in ``<out>/<variant>/`` and writes the aggregate to
``<out>/sweep.json``; re-running with the same ``--out`` resumes every variant.

Sweeps declared today: ``categories`` (BFCL-v0: the BFCL-v4 overall score), ``memories``
(VitaBench-v0: one run per memory backend), ``domains`` (Tau2-v0: the leaderboard view;
VitaBench-v0: one run per domain) and ``skillrise`` (any env, declared by ``SkillRise-v0``
with ``any_env=True``: SkillRise trials over the env).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

from agentgym_suite.evaluation.runner import EvalResult, evaluate
from agentgym_suite.registration import env_class

SWEEP_FILE = "sweep.json"


@dataclass(frozen=True)
class Variant:
    """One evaluation of a sweep.

    ``folder`` is where it runs under the sweep's output directory (default: ``name``; ``""``
    runs it in the output directory itself, for a one-variant sweep). ``env_id`` replaces the
    swept env id (SkillRise runs its trial env over the swept one); ``options`` replace
    :func:`~agentgym_suite.evaluation.runner.evaluate` keyword arguments.
    """

    name: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    env_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    folder: str | None = None
    replace_kwargs: bool = False
    """True: ``env_kwargs`` are the variant's whole kwargs, not an overlay on the swept ones."""

    def out_dir(self, root: Path) -> Path:
        """Where this variant runs."""
        folder = self.name if self.folder is None else self.folder
        return root / folder if folder else root


@dataclass
class SweepRun:
    """What a sweep's aggregate sees: the request and every variant's result (in variant order)."""

    env_id: str
    args: str
    agent: Any
    out_dir: Path
    env_kwargs: dict[str, Any]
    options: dict[str, Any]
    variants: list[Variant]
    results: dict[str, EvalResult]


@dataclass
class SweepOutcome:
    """A sweep's aggregate: ``data`` (written to ``sweep.json`` and printed by ``--json``), a rich
    renderable ``table`` (or None: each variant's summary is printed), and lines printed after it."""

    data: dict[str, Any]
    table: Any = None
    notes: list[str] = field(default_factory=list)
    value: Any = None
    """The benchmark's own typed result (e.g. ``BFCLOverall``), for callers of the library function."""


@dataclass(frozen=True)
class Sweep:
    """A benchmark's declared sweep.

    ``variants(args, env_id, env_kwargs, options)`` returns the variants for ``ARGS`` (raising
    ValueError with the accepted syntax on bad input); ``aggregate(run)`` combines their results.
    ``any_env``: the sweep applies to every env id (declared once by the env that wraps them).
    ``needs_agent``: ``variants`` also gets the agent (keyword ``agent``), for variants that depend
    on it (VitaBench's rewrite memory rewrites with the agent's model).
    """

    name: str
    usage: str
    variants: Callable[[str, str, dict[str, Any], dict[str, Any]], list[Variant]]
    aggregate: Callable[[SweepRun], SweepOutcome]
    any_env: bool = False
    needs_agent: bool = False


@dataclass
class SweepResult:
    """What :func:`run_sweep` returns."""

    sweep: Sweep
    run: SweepRun
    outcome: SweepOutcome

    @property
    def crashed(self) -> int:
        """Crashed episodes over every variant."""
        return sum(int(r.summary.get("crashed") or 0) for r in self.run.results.values())


def _declared(env_class: Any) -> list[Sweep]:
    """The sweeps of an env class's ``sweeps()`` hook, ``"module:factory"`` paths resolved."""
    hook = getattr(env_class, "sweeps", None)
    found = []
    for item in hook() if callable(hook) else []:
        if isinstance(item, str):
            module, _, name = item.partition(":")
            item = getattr(importlib.import_module(module), name)()
        found.append(item)
    return found


def declared_sweeps(env_id: str) -> dict[str, Sweep]:
    """The sweeps ``env_id`` offers: its class's own, then those some env declares for every env."""
    found: dict[str, Sweep] = {}
    for sweep in _declared(env_class(env_id)):
        found.setdefault(sweep.name, sweep)
    for spec_id in sorted(gym.registry):
        entry = gym.registry[spec_id].entry_point
        if not (isinstance(entry, str) and entry.startswith("agentgym_suite.")):
            continue
        for sweep in _declared(env_class(spec_id)):
            if sweep.any_env:
                found.setdefault(sweep.name, sweep)
    return found


def find_sweep(env_id: str, name: str) -> Sweep:
    """The sweep ``name`` of ``env_id``.

    Raises:
        ValueError: when the env declares no such sweep (the message lists those it has).
    """
    sweeps = declared_sweeps(env_id)
    if name not in sweeps:
        offered = ", ".join(f"{s.name} ({s.usage})" for s in sweeps.values()) or "none"
        raise ValueError(f"{env_id} declares no sweep {name!r}; its sweeps: {offered}.")
    return sweeps[name]


def parse_sweep(text: str) -> tuple[str, str]:
    """``"NAME[:ARGS]"`` -> ``(NAME, ARGS)``."""
    name, _, args = text.strip().partition(":")
    if not name:
        raise ValueError(f"--sweep takes NAME[:ARGS], e.g. --sweep domains:retail,airline; got {text!r}.")
    return name, args


def split_list(args: str, what: str, example: str) -> list[str]:
    """A comma list of distinct names (ValueError when empty or repeated)."""
    names = [n.strip() for n in args.split(",") if n.strip()]
    if not names:
        raise ValueError(f"the sweep needs at least one {what}, e.g. {example}")
    if len(set(names)) != len(names):
        raise ValueError(f"a {what} is listed twice: {args!r}")
    return names


def run_sweep(env_id: str, agent: Any, sweep: Sweep | str, *, out_dir: str | Path, args: str = "",
              env_kwargs: dict[str, Any] | None = None, **evaluate_kwargs: Any) -> SweepResult:
    """Run each variant of ``sweep`` (a :class:`Sweep` or its name) resumably and aggregate them.

    ``evaluate_kwargs`` go to :func:`~agentgym_suite.evaluation.runner.evaluate` (a variant's
    own ``options`` win). Writes ``<out>/sweep.json``.
    """
    chosen = find_sweep(env_id, sweep) if isinstance(sweep, str) else sweep
    base = dict(env_kwargs or {})
    options = dict(evaluate_kwargs)
    variants = chosen.variants(args, env_id, base, options, **({"agent": agent} if chosen.needs_agent else {}))
    out = Path(out_dir)
    results: dict[str, EvalResult] = {}
    for variant in variants:
        kwargs = dict(variant.env_kwargs) if variant.replace_kwargs else {**base, **variant.env_kwargs}
        results[variant.name] = evaluate(variant.env_id or env_id, agent, out_dir=variant.out_dir(out), env_kwargs=kwargs,
                                         **{**options, **variant.options})
    run = SweepRun(env_id=env_id, args=args, agent=agent, out_dir=out, env_kwargs=base, options=options,
                   variants=variants, results=results)
    outcome = chosen.aggregate(run)
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "sweep": chosen.name, "args": args, "env_id": env_id,
        "variants": [{"name": v.name, "env_id": v.env_id or env_id, "out_dir": str(v.out_dir(out)),
                      "env_kwargs_overlay": v.env_kwargs} for v in variants],
        "aggregate": outcome.data,
    }
    (out / SWEEP_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return SweepResult(chosen, run, outcome)


def kwarg_sweep(name: str, kwarg: str, example: str,
                aggregate: Callable[[SweepRun], SweepOutcome] | None = None) -> Sweep:
    """A sweep over the values of one env kwarg (``--sweep NAME:a,b``), each value in ``<out>/<value>/``.

    Without ``aggregate`` the outcome lists each variant's summary (printed one after another).
    """

    def variants(args: str, env_id: str, env_kwargs: dict[str, Any], options: dict[str, Any]) -> list[Variant]:
        if kwarg in env_kwargs:
            raise ValueError(f"the {name} sweep sets {kwarg!r}; drop it from --env-kwargs.")
        return [Variant(value, {kwarg: value}) for value in split_list(args, kwarg, f"{name}:{example}")]

    def summaries(run: SweepRun) -> SweepOutcome:
        return SweepOutcome({"runs": {n: r.summary for n, r in run.results.items()}})

    return Sweep(name, f"{name}:A,B,... over the env kwarg {kwarg!r}", variants, aggregate or summaries)


__all__ = ["SWEEP_FILE", "Sweep", "SweepOutcome", "SweepResult", "SweepRun", "Variant", "declared_sweeps", "find_sweep",
           "kwarg_sweep", "parse_sweep", "run_sweep", "split_list"]

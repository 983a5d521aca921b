"""The generic runner of evaluation sweeps: ``agentgym eval ENV --sweep NAME[:ARGS]``.

A benchmark declares its sweeps beside its env (``envs/<benchmark>/sweep.py``, listed by the
``sweeps()`` classmethod of :class:`~agentgym_suite.core.text_env.TextEnv`) as
:class:`~agentgym_suite.core.sweeps.Sweep` declarations: pure functions from the request to the
variants and from the variants' results to the aggregate. :func:`run_sweep` runs every variant
as an ordinary resumable evaluation in ``<out>/<variant>/``, hands the results to the
aggregate, writes ``<out>/sweep.json`` and the files the aggregate asks for, and
:func:`render_table` turns its table into a rich table. Re-running with the same ``--out``
resumes every variant. A sweep declared with ``any_env=True`` is offered for every env id.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_suite.core.sweeps import (
    Sweep,
    SweepOutcome,
    SweepRequest,
    SweepTable,
    Variant,
    VariantResult,
    kwarg_sweep,
    split_list,
)
from agentgym_suite.evaluation.agent_specs import is_model_spec
from agentgym_suite.evaluation.runner import EvalResult, evaluate
from agentgym_suite.registration import env_class, register_all

SWEEP_FILE = "sweep.json"


@dataclass
class SweepResult:
    """What :func:`run_sweep` returns: the sweep, its request, every variant's evaluation and the aggregate."""

    sweep: Sweep
    request: SweepRequest
    variants: list[Variant]
    results: dict[str, EvalResult]
    outcome: SweepOutcome
    out_dir: Path

    @property
    def crashed(self) -> int:
        """Crashed episodes over every variant."""
        return sum(int(r.summary.get("crashed") or 0) for r in self.results.values())


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


def _suite_ids() -> list[str]:
    """The registered ids whose entry point is in this package (where declared sweeps are looked for)."""
    register_all()
    return [spec_id for spec_id in sorted(gym.registry)
            if isinstance(gym.registry[spec_id].entry_point, str)
            and str(gym.registry[spec_id].entry_point).startswith("agentgym_suite.")]


def declared_sweeps(env_id: str) -> dict[str, Sweep]:
    """The sweeps ``env_id`` offers: its class's own, then those some env declares for every env."""
    found: dict[str, Sweep] = {}
    for sweep in _declared(env_class(env_id)):
        found.setdefault(sweep.name, sweep)
    for spec_id in _suite_ids():
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


def run_sweep(env_id: str, agent: Any, sweep: Sweep | str, *, out_dir: str | Path, args: str = "",
              env_kwargs: dict[str, Any] | None = None, **evaluate_kwargs: Any) -> SweepResult:
    """Run each variant of ``sweep`` (a :class:`Sweep` or its name) resumably and aggregate them.

    ``evaluate_kwargs`` go to :func:`~agentgym_suite.evaluation.runner.evaluate` (a variant's
    own ``options`` win). Writes ``<out>/sweep.json`` and the aggregate's ``files``.
    """
    chosen = find_sweep(env_id, sweep) if isinstance(sweep, str) else sweep
    base = dict(env_kwargs or {})
    options = dict(evaluate_kwargs)
    model = agent if isinstance(agent, str) and is_model_spec(agent) else None
    out = Path(out_dir)
    request = SweepRequest(env_id=env_id, args=args, env_kwargs=base, options=options,
                           agent=str(getattr(agent, "name", None) or agent), agent_model=model, out_dir=out)
    variants = chosen.variants(request)
    results: dict[str, EvalResult] = {}
    for variant in variants:
        kwargs = dict(variant.env_kwargs) if variant.replace_kwargs else {**base, **variant.env_kwargs}
        results[variant.name] = evaluate(variant.env_id or env_id, agent, out_dir=variant.out_dir(out), env_kwargs=kwargs,
                                         **{**options, **variant.options})
    finished = {name: VariantResult(name, {**r.summary}, r.out_dir, r.records) for name, r in results.items()}
    outcome = chosen.aggregate(request, finished)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in outcome.files.items():
        (out / name).write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    record = {
        "sweep": chosen.name, "args": args, "env_id": env_id,
        "variants": [{"name": v.name, "env_id": v.env_id or env_id, "out_dir": str(v.out_dir(out)),
                      "env_kwargs_overlay": v.env_kwargs} for v in variants],
        "aggregate": outcome.data,
    }
    (out / SWEEP_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return SweepResult(chosen, request, variants, results, outcome, out)


def render_table(table: SweepTable) -> Any:
    """A rich ``Table`` of a sweep's :class:`~agentgym_suite.core.sweeps.SweepTable`."""
    from rich.table import Table

    shown = Table(title=table.title or None, caption=table.caption or None)
    for column in table.columns:
        shown.add_column(column, justify="left" if column in table.left else "right")
    for index, row in enumerate(table.rows):
        if index in table.sections:
            shown.add_section()
        shown.add_row(*row)
    return shown


def sweep_aliases() -> dict[str, Sweep]:
    """The older ``agentgym eval`` flags (``--ALIAS``) that declared sweeps keep, by flag name."""
    found: dict[str, Sweep] = {}
    for spec_id in _suite_ids():
        for sweep in _declared(env_class(spec_id)):
            if sweep.alias:
                found.setdefault(sweep.alias, sweep)
    return found


__all__ = ["SWEEP_FILE", "Sweep", "SweepOutcome", "SweepRequest", "SweepResult", "SweepTable", "Variant", "VariantResult",
           "declared_sweeps", "find_sweep", "kwarg_sweep", "parse_sweep", "render_table", "run_sweep", "split_list",
           "sweep_aliases"]

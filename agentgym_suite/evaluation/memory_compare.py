"""Compare memory backends on the same VitaBench 2.0 sequences: ``agentgym eval VitaBench-v0 --memory a,b,c``.

Each backend gets its own resumable evaluation (``<out>/memory-<name>/``) with every other
setting held equal (agent, user, judge, tasks, seed, attempts), as upstream's
``scripts/run_memory_benchmark.sh`` does; the results go into one table and
``<out>/comparison.json`` (with the per-user numbers of every backend).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from agentgym_suite.envs.vitabench.memory import rewrite_on_agent_model
from agentgym_suite.evaluation.agent_specs import is_model_spec
from agentgym_suite.evaluation.runner import EvalResult

COMPARISON_FILE = "comparison.json"


@dataclass
class MemoryComparison:
    """What :func:`compare_memories` returns: one row per backend and each backend's evaluation."""

    rows: list[dict[str, Any]]
    k: int
    out_dir: Path
    results: dict[str, EvalResult] = field(default_factory=dict)


def parse_memories(text: str) -> list[str]:
    """``"none, full,bm25"`` -> ``["none", "full", "bm25"]``; raises ValueError when empty or repeated."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("--memory needs at least one backend, e.g. --memory none,full,bm25")
    if len(set(names)) != len(names):
        raise ValueError(f"--memory lists a backend twice: {text!r}")
    return names


def folder_name(memory: str) -> str:
    """A directory name for a backend spec (``rewrite:llm:hf:x/y`` -> ``memory-rewrite-llm-hf-x-y``)."""
    return "memory-" + re.sub(r"[^A-Za-z0-9._-]+", "-", memory).strip("-")


def _row(memory: str, summary: dict[str, Any]) -> dict[str, Any]:
    metrics = summary.get("sequence_metrics") or {}
    overall, users = metrics.get("overall") or {}, metrics.get("user_level") or {}
    labels = summary.get("labels") or {}
    return {
        "memory": memory,
        "backend": ", ".join(labels.get("memory", [])) or memory,
        "scoring": ", ".join(labels.get("scoring", [])),
        "user_simulator": ", ".join(labels.get("user_simulator", [])),
        "users": overall.get("users"),
        "subtasks": overall.get("subtasks"),
        "unscorable_episodes": summary.get("unscorable_episodes", 0),
        "avg@k": overall.get("avg@k"),
        "pass@k": overall.get("pass@k"),
        "pass^k": overall.get("pass^k"),
        "user_avg@k": users.get("avg@k"),
        "by_user": summary.get("by_sequence") or {},
        "out_dir": summary.get("out_dir", ""),
    }


def compare_memories(env_id: str, agent: Any, memories: list[str], *, out_dir: str | Path,
                     env_kwargs: dict[str, Any] | None = None, **evaluate_kwargs: Any) -> MemoryComparison:
    """Evaluate ``agent`` once per memory backend on the same 2.0 subtasks and collect one row each
    (the ``memories`` sweep, :func:`memories_sweep`; it also writes ``sweep.json``).

    ``env_kwargs`` must not set ``memory`` (each backend sets it) and gets ``version=2``; a bare
    ``rewrite`` rewrites with the agent's model when the agent is one, as upstream;
    ``evaluate_kwargs`` go to :func:`~agentgym_suite.evaluation.runner.evaluate` unchanged.

    Raises:
        ValueError: when ``env_kwargs`` fixes the memory or another version.
    """
    from agentgym_suite.evaluation.sweep import run_sweep

    result = run_sweep(env_id, agent, memories_sweep(), args=",".join(memories), out_dir=out_dir, env_kwargs=env_kwargs,
                       **evaluate_kwargs)
    comparison: MemoryComparison = result.outcome.value
    return comparison


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def comparison_table(comparison: MemoryComparison, title: str = "") -> Table:
    """One row per memory backend: subtask-level Avg@k, Pass@k, Pass^k, the user-level Avg@k, and how it was scored."""
    k = comparison.k
    users = sorted({row["user_simulator"] for row in comparison.rows if row["user_simulator"]})
    table = Table(title=title or f"memory backends · Avg@{k} / Pass@{k} / Pass^{k} over subtasks",
                  caption=f"simulated user: {', '.join(users) or '-'}; 'left out': episodes that could not be scored")
    for column in ("memory", "scoring", "users", "subtasks", "left out", f"Avg@{k}", f"Pass@{k}", f"Pass^{k}", f"user Avg@{k}"):
        table.add_column(column, justify="left" if column in ("memory", "scoring") else "right")
    for row in comparison.rows:
        table.add_row(row["backend"], row["scoring"], _fmt(row["users"]), _fmt(row["subtasks"]), _fmt(row["unscorable_episodes"]),
                      _fmt(row["avg@k"]), _fmt(row["pass@k"]), _fmt(row["pass^k"]), _fmt(row["user_avg@k"]))
    return table


def _memory_variants(args: str, env_id: str, env_kwargs: dict[str, Any], options: dict[str, Any], *,
                     agent: Any = None) -> list[Any]:
    """One variant per backend; a bare ``rewrite`` rewrites with the agent's model when the agent is one."""
    from agentgym_suite.evaluation.sweep import Variant

    if "memory" in env_kwargs:
        raise ValueError("give the memory backends with --memory only, not in --env-kwargs as well.")
    if env_kwargs.get("version", 2) != 2:
        raise ValueError("--memory compares VitaBench 2.0 memories; drop version from --env-kwargs (it is set to 2).")
    model = agent if isinstance(agent, str) and is_model_spec(agent) else None
    return [Variant(m, {"version": 2, "memory": rewrite_on_agent_model(m, model)}, folder=folder_name(m))
            for m in parse_memories(args)]


def _memory_aggregate(run: Any) -> Any:
    from agentgym_suite.evaluation.sweep import SweepOutcome

    k = int(run.options.get("k") or 1)
    comparison = MemoryComparison(rows=[], k=k, out_dir=run.out_dir, results=dict(run.results))
    for memory, result in run.results.items():
        comparison.rows.append(_row(memory, {**result.summary, "out_dir": str(result.out_dir)}))
    data = {"env_id": run.env_id, "k": k, "rows": comparison.rows}
    run.out_dir.mkdir(parents=True, exist_ok=True)
    (run.out_dir / COMPARISON_FILE).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return SweepOutcome(data, comparison_table(comparison, title=f"{run.env_id} · {run.agent} · memory backends, k={k}"),
                        [f"wrote {run.out_dir / COMPARISON_FILE} and one run folder per backend"], comparison)


def memories_sweep() -> Any:
    """``--sweep memories:none,full,bm25`` (alias ``--memory``): one VitaBench 2.0 run per memory backend in
    ``<out>/memory-<name>/``, every other setting equal, then one comparison table (``comparison.json``)."""
    from agentgym_suite.evaluation.sweep import Sweep

    return Sweep("memories", "memories:A,B,... (VitaBench 2.0 memory backends)", _memory_variants, _memory_aggregate,
                 needs_agent=True)


__all__ = ["COMPARISON_FILE", "memories_sweep", "MemoryComparison", "compare_memories", "comparison_table", "folder_name", "parse_memories"]


def domains_sweep() -> Any:
    """VitaBench's ``--sweep domains:A,B``: one run per domain, each summary printed."""
    from agentgym_suite.evaluation.sweep import kwarg_sweep

    return kwarg_sweep("domains", "domain", "delivery,instore,ota")

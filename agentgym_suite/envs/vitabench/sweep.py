"""VitaBench's evaluation sweeps: ``--sweep memories:a,b,c`` (alias ``--memory``) compares memory backends on
the same 2.0 sequences; ``--sweep domains:A,B`` runs once per domain.

Each backend gets its own resumable evaluation (``<out>/memory-<name>/``) with every other
setting held equal (agent, user, judge, tasks, seed, attempts), as upstream's
``scripts/run_memory_benchmark.sh`` does; the results go into one table and
``<out>/comparison.json`` (with the per-user numbers of every backend).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.core.sweeps import Sweep, SweepOutcome, SweepRequest, SweepTable, Variant, VariantResult, kwarg_sweep
from agentgym_suite.envs.vitabench.memory import rewrite_on_agent_model

COMPARISON_FILE = "comparison.json"


@dataclass
class MemoryComparison:
    """The ``memories`` sweep's typed result: one row per backend and each backend's finished run."""

    rows: list[dict[str, Any]]
    k: int
    out_dir: Path
    results: dict[str, VariantResult] = field(default_factory=dict)


def parse_memories(text: str) -> list[str]:
    """``"none, full,bm25"`` -> ``["none", "full", "bm25"]``; raises ValueError when empty or repeated."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("the memories sweep needs at least one backend, e.g. memories:none,full,bm25")
    if len(set(names)) != len(names):
        raise ValueError(f"the memories sweep lists a backend twice: {text!r}")
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


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def comparison_table(comparison: MemoryComparison, title: str = "") -> SweepTable:
    """One row per memory backend: subtask-level Avg@k, Pass@k, Pass^k, the user-level Avg@k, and how it was scored."""
    k = comparison.k
    users = sorted({row["user_simulator"] for row in comparison.rows if row["user_simulator"]})
    table = SweepTable(title=title or f"memory backends · Avg@{k} / Pass@{k} / Pass^{k} over subtasks",
                       columns=["memory", "scoring", "users", "subtasks", "left out", f"Avg@{k}", f"Pass@{k}", f"Pass^{k}",
                                f"user Avg@{k}"],
                       caption=f"simulated user: {', '.join(users) or '-'}; 'left out': episodes that could not be scored",
                       left=("memory", "scoring"))
    for row in comparison.rows:
        table.rows.append([row["backend"], row["scoring"], _fmt(row["users"]), _fmt(row["subtasks"]), _fmt(row["unscorable_episodes"]),
                      _fmt(row["avg@k"]), _fmt(row["pass@k"]), _fmt(row["pass^k"]), _fmt(row["user_avg@k"])])
    return table


def _memory_variants(request: SweepRequest) -> list[Variant]:
    """One variant per backend; a bare ``rewrite`` rewrites with the agent's model when the agent is one."""
    if "memory" in request.env_kwargs:
        raise ValueError("give the memory backends with the memories sweep only, not in --env-kwargs as well.")
    if request.env_kwargs.get("version", 2) != 2:
        raise ValueError("the memories sweep compares VitaBench 2.0 memories; drop version from --env-kwargs (it is set to 2).")
    return [Variant(m, {"version": 2, "memory": rewrite_on_agent_model(m, request.agent_model)}, folder=folder_name(m))
            for m in parse_memories(request.args)]


def _memory_aggregate(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    k = int(request.options.get("k") or 1)
    comparison = MemoryComparison(rows=[], k=k, out_dir=request.out_dir, results=dict(results))
    for memory, result in results.items():
        comparison.rows.append(_row(memory, {**result.summary, "out_dir": str(result.out_dir)}))
    data = {"env_id": request.env_id, "k": k, "rows": comparison.rows}
    return SweepOutcome(data, comparison_table(comparison, title=f"{request.env_id} · {request.agent} · memory backends, k={k}"),
                        ["wrote one run folder per backend"], {COMPARISON_FILE: data}, comparison)


def memories_sweep() -> Sweep:
    """``--sweep memories:none,full,bm25`` (alias ``--memory``): one VitaBench 2.0 run per memory backend in
    ``<out>/memory-<name>/``, every other setting equal, then one comparison table (``comparison.json``)."""
    return Sweep("memories", "memories:A,B,... (VitaBench 2.0 memory backends)", _memory_variants, _memory_aggregate,
                 alias="--memory", alias_metavar="A,B,...",
                 alias_help="alias of --sweep memories:A,B. VitaBench 2.0: evaluate once per memory backend on the same "
                            "sequences and print one table (none, full, rewrite, rewrite:<backend spec>, bm25, embedding, "
                            "embedding:minilm, embedding:hashing, groundtruth)")


def domains_sweep() -> Sweep:
    """VitaBench's ``--sweep domains:A,B``: one run per domain, each summary printed."""
    return kwarg_sweep("domains", "domain", "delivery,instore,ota")


__all__ = ["COMPARISON_FILE", "MemoryComparison", "comparison_table", "domains_sweep", "folder_name", "memories_sweep",
           "parse_memories"]

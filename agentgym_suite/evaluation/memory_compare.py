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
from agentgym_suite.evaluation.runner import EvalResult, evaluate

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
    """Evaluate ``agent`` once per memory backend on the same 2.0 subtasks and collect one row each.

    ``env_kwargs`` must not set ``memory`` (each backend sets it) and gets ``version=2``; a bare
    ``rewrite`` rewrites with the agent's model when the agent is one, as upstream;
    ``evaluate_kwargs`` go to :func:`~agentgym_suite.evaluation.runner.evaluate` unchanged.

    Raises:
        ValueError: when ``env_kwargs`` fixes the memory or another version.
    """
    base = dict(env_kwargs or {})
    if "memory" in base:
        raise ValueError("give the memory backends with --memory only, not in --env-kwargs as well.")
    if base.get("version", 2) != 2:
        raise ValueError("--memory compares VitaBench 2.0 memories; drop version from --env-kwargs (it is set to 2).")
    base["version"] = 2
    out = Path(out_dir)
    k = int(evaluate_kwargs.get("k", 1))
    comparison = MemoryComparison(rows=[], k=k, out_dir=out)
    for memory in memories:
        backend = rewrite_on_agent_model(memory, agent if isinstance(agent, str) and is_model_spec(agent) else None)
        result = evaluate(env_id, agent, out_dir=out / folder_name(memory), env_kwargs={**base, "memory": backend}, **evaluate_kwargs)
        comparison.results[memory] = result
        comparison.rows.append(_row(memory, {**result.summary, "out_dir": str(result.out_dir)}))
    out.mkdir(parents=True, exist_ok=True)
    (out / COMPARISON_FILE).write_text(json.dumps({"env_id": env_id, "k": k, "rows": comparison.rows}, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
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


__all__ = ["COMPARISON_FILE", "MemoryComparison", "compare_memories", "comparison_table", "folder_name", "parse_memories"]

"""τ²-bench's evaluation sweep: ``agentgym eval Tau2-v0 --sweep domains:A,B`` (alias ``--domains``), one run
per domain, then the leaderboard view of them, computed as upstream's metrics do.

Per domain: the average reward, Pass^1..Pass^k (for each task, the chance that ``k`` trials drawn
without replacement from its ``n`` all succeed, C(successes, k) / C(n, k), averaged over tasks;
a success is a reward of 1 within 1e-6; ``k`` runs up to the fewest trials any task had), the
DB-match counts (match / mismatch / not checked: conversations that ended early are not checked)
and the termination counts (user stop, agent stop, max steps, errors: too many tool errors or a
failed simulator). Across domains: the average of the domains' Pass^1 (the leaderboard's headline).

Episodes the env could not score (NL assertions without a judge) are counted as failures in the
rates and reported next to them as ``unscored``: the rates are then a lower bound and the view
says it is not comparable. Crashed episodes (the agent's backend failed) are left out, as
upstream leaves out infrastructure errors.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

from agentgym_suite.core.sweeps import Sweep, SweepOutcome, SweepRequest, SweepTable, VariantResult, kwarg_sweep

LEADERBOARD_FILE = "leaderboard.json"
SUCCESS_TOLERANCE = 1e-6
ERROR_ENDS = ("too_many_errors", "agent_error", "user_error")


def pass_hat(trials: int, successes: int, k: int) -> float:
    """Pass^k of one task with ``successes`` of ``trials``: C(successes, k) / C(trials, k)."""
    if trials < k:
        raise ValueError(f"a task has {trials} trials, fewer than k={k}")
    return math.comb(successes, k) / math.comb(trials, k)


def final_info(record: Any) -> dict[str, Any]:
    """The info of an episode record's last turn (empty when it has no turns)."""
    return record.turns[-1].info if record.turns else {}


def is_scorable(record: Any) -> bool:
    """False when the env reported the episode as not scorable (``info["scorable"] is False``)."""
    return final_info(record).get("scorable", True) is not False


def _reward(record: Any) -> float:
    info = final_info(record)
    breakdown = info.get("reward_breakdown") or {}
    return float(breakdown.get("reward", record.score) or 0.0)


def domain_metrics(records: Sequence[Any]) -> dict[str, Any]:
    """Upstream's metrics of one domain's episodes (crashed ones left out)."""
    played = [r for r in records if not r.broken]
    per_task: dict[str, list[bool]] = defaultdict(list)
    db = {"match": 0, "mismatch": 0, "not_checked": 0}
    ends = {"user_stop": 0, "agent_stop": 0, "max_steps": 0, "error": 0, "other": 0}
    rewards = []
    unscored = 0
    for record in played:
        info = final_info(record)
        reward = _reward(record) if is_scorable(record) else 0.0
        unscored += int(not is_scorable(record))
        rewards.append(reward)
        per_task[record.task_id].append(abs(reward - 1.0) <= SUCCESS_TOLERANCE and is_scorable(record))
        match = info["db_match"] if "db_match" in info else ((info.get("reward_breakdown") or {}).get("details") or {}).get("db_match")
        db["not_checked" if match is None else "match" if match else "mismatch"] += 1
        end = str(info.get("termination_reason") or "other")
        ends["error" if end in ERROR_ENDS else end if end in ends else "other"] += 1
    max_k = min((len(v) for v in per_task.values()), default=0)
    pass_hats = {k: sum(pass_hat(len(v), sum(v), k) for v in per_task.values()) / len(per_task)
                 for k in range(1, max_k + 1)}
    return {"simulations": len(played), "tasks": len(per_task), "crashed": len(records) - len(played),
            "avg_reward": sum(rewards) / len(rewards) if rewards else None, "pass_hat_k": pass_hats,
            "unscored": unscored, "db": db, "termination": ends}


@dataclass
class LeaderboardView:
    """The per-domain metrics and the average Pass^1 over domains."""

    domains: dict[str, dict[str, Any]]
    k: int
    departures: list[str] = field(default_factory=list)

    @property
    def average_pass_1(self) -> float | None:
        """Mean over domains of Pass^1 (None when a domain has no episode)."""
        values = [m["pass_hat_k"].get(1) for m in self.domains.values()]
        if not values or any(v is None for v in values):
            return None
        return sum(values) / len(values)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for ``leaderboard.json``."""
        return {"benchmark": "tau2", "k": self.k, "average_pass_1": self.average_pass_1,
                "comparable_to_leaderboard": not self.departures, "leaderboard_departures": list(self.departures),
                "domains": {d: {**m, "pass_hat_k": {str(k): v for k, v in m["pass_hat_k"].items()}}
                            for d, m in self.domains.items()}}

    def table(self) -> SweepTable:
        """A table with one column per domain: tasks and simulations, average reward, Pass^1..Pass^k,
        DB match counts and termination counts."""
        table = SweepTable(title=f"τ²-bench leaderboard view · k={self.k} · average Pass^1 over domains = "
                                 f"{_fmt(self.average_pass_1)}", columns=["metric", *self.domains], left=("metric",))
        metrics = list(self.domains.values())
        rows: list[tuple[str, list[str]]] = [
            ("tasks / simulations", [f"{m['tasks']} / {m['simulations']}" for m in metrics]),
            ("average reward", [_fmt(m["avg_reward"]) for m in metrics]),
            *[(f"Pass^{k}", [_fmt(m["pass_hat_k"].get(k)) for m in metrics]) for k in range(1, self.k + 1)],
            ("DB match / mismatch / not checked",
             [f"{m['db']['match']} / {m['db']['mismatch']} / {m['db']['not_checked']}" for m in metrics]),
            ("ended: user stop / max steps / errors",
             [f"{m['termination']['user_stop']} / {m['termination']['max_steps']} / {m['termination']['error']}"
              for m in metrics]),
            ("unscored (counted as failures)", [str(m["unscored"]) for m in metrics]),
        ]
        table.rows = [[name, *values] for name, values in rows]
        return table


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def leaderboard_view(runs: dict[str, Sequence[Any]], k: int, departures: Sequence[str] = ()) -> LeaderboardView:
    """The view of one evaluation per domain (``runs``: domain -> its episodes)."""
    domains = {domain: domain_metrics(records) for domain, records in runs.items()}
    reasons = list(departures)
    for domain, m in domains.items():
        if m["unscored"]:
            reasons.append(f"{domain}: {m['unscored']} episode(s) unscored (no NL-assertion judge) count as failures")
    return LeaderboardView(domains, k, sorted(set(reasons), key=reasons.index))


def _domains_aggregate(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    """The ``domains`` sweep's aggregate: the leaderboard view, also written to ``leaderboard.json``."""
    departures = sorted({r for result in results.values() for r in result.summary.get("leaderboard_departures") or []})
    view = leaderboard_view({d: r.records for d, r in results.items()}, int(request.options.get("k") or 1), departures)
    data = view.as_dict()
    data["settings"] = next(iter(results.values())).summary.get("agent_settings") if results else None
    notes = [f"  - not comparable: {reason}" for reason in data.get("leaderboard_departures") or []]
    notes.append("wrote one run folder per domain")
    return SweepOutcome(data, view.table(), notes, {LEADERBOARD_FILE: data}, view)


def domains_sweep() -> Sweep:
    """``--sweep domains:retail,airline,telecom`` (alias ``--domains``): one run per domain in ``<out>/<domain>/``,
    then the leaderboard view."""
    return kwarg_sweep("domains", "domain", "retail,airline,telecom", _domains_aggregate, alias="--domains",
                       alias_help=DOMAINS_ALIAS_HELP)


DOMAINS_ALIAS_HELP = ("alias of --sweep domains:A,B: evaluate once per domain (env kwarg 'domain'), each in "
                      "<out>/<domain>/, and print the benchmark's leaderboard view when it declares one")


__all__ = ["LEADERBOARD_FILE", "LeaderboardView", "domain_metrics", "domains_sweep", "leaderboard_view", "pass_hat"]

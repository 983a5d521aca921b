"""SkillRise evaluation: ``agentgym eval <ID> --skillrise sequence:K`` or ``--skillrise repeat:K``.

Each episode is a ``SkillRise-v0`` trial over the base env (see
:mod:`agentgym_suite.envs.skillrise.trial_env`): the agent solves a task, curates its skill
document from that attempt, solves the next task with the document in context, and so on,
as in training. The trial runs as an ordinary resumable evaluation; this module reads which
tasks were solved at which position (``finished_position``/``finished_won`` in the turn
records) and reports:

* ``sequence``: Pass@1 at each position of K related tasks (ordered easier to harder), and
  success against sequence length L = 1..K: the mean success over the first L tasks and the
  success of the L-th task. A prefix of a sequence is itself a sequence (the agent at
  position p has seen only the p tasks before it), so one run of length K gives every
  L <= K: the paper's test-time scaling result.
* ``repeat``: the same task K times: success at attempt a, and the share of tasks solved
  within the first a attempts.

Trials that crashed are left out and counted; a task never reached (the trial ended first)
counts as unsolved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from agentgym_suite.envs.skillrise.env import MODES
from agentgym_suite.envs.skillrise.trial_env import DEFAULT_TURNS_PER_TASK, trial_turn_limit
from agentgym_suite.evaluation.runner import EvalResult
from agentgym_suite.rollout import Trajectory

SKILLRISE_ENV_ID = "SkillRise-v0"
SKILLRISE_FILE = "skillrise.json"


@dataclass(frozen=True)
class SkillRiseSpec:
    """What ``--skillrise MODE:K[:TURNS]`` asks for."""

    mode: str
    k: int
    turns_per_task: int = DEFAULT_TURNS_PER_TASK


def parse_spec(text: str) -> SkillRiseSpec:
    """``sequence:3``, ``repeat:4`` or ``sequence:3:20`` (20 Solve turns per task)."""
    parts = text.strip().split(":")
    usage = "--skillrise takes sequence:K or repeat:K (optionally :TURNS per task), e.g. sequence:3"
    if len(parts) not in (2, 3) or parts[0] not in MODES:
        raise ValueError(f"{usage}; got {text!r}.")
    try:
        numbers = [int(p) for p in parts[1:]]
    except ValueError:
        raise ValueError(f"{usage}; got {text!r}.") from None
    if any(n < 1 for n in numbers):
        raise ValueError(f"{usage}; K and TURNS must be >= 1, got {text!r}.")
    return SkillRiseSpec(parts[0], *numbers)


@dataclass
class SkillRiseReport:
    """Per-position results of a SkillRise evaluation."""

    spec: SkillRiseSpec
    trials: int
    left_out: int
    pass_at_position: list[float | None]
    success_by_length: list[dict[str, float | int | None]]
    out_dir: Path
    result: EvalResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON written to ``skillrise.json``."""
        return {"mode": self.spec.mode, "k": self.spec.k, "turns_per_task": self.spec.turns_per_task,
                "trials": self.trials, "left_out_trials": self.left_out, "pass_at_position": self.pass_at_position,
                "success_by_length": self.success_by_length}


def position_results(record: Trajectory, k: int) -> list[bool]:
    """Whether each of the ``k`` positions of a trial was solved (False for a position never finished)."""
    solved = [False] * k
    for turn in record.turns:
        position = turn.info.get("finished_position")
        if isinstance(position, int) and 0 <= position < k:
            solved[position] = bool(turn.info.get("finished_won"))
    return solved


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def skillrise_report(records: list[Trajectory], spec: SkillRiseSpec, out_dir: Path) -> SkillRiseReport:
    """Per-position success of finished trials (crashed trials are left out and counted)."""
    usable = [r for r in records if not r.failed]
    rows = [position_results(r, spec.k) for r in usable]
    pass_at = [_mean([float(row[p]) for row in rows]) for p in range(spec.k)]
    by_length: list[dict[str, float | int | None]] = []
    for length in range(1, spec.k + 1):
        entry: dict[str, float | int | None] = {"length": length, "last_task": pass_at[length - 1]}
        if spec.mode == "sequence":
            entry["mean_success"] = _mean([sum(row[:length]) / length for row in rows])
        else:
            entry["solved_within"] = _mean([float(any(row[:length])) for row in rows])
        by_length.append(entry)
    return SkillRiseReport(spec, len(rows), len(records) - len(usable), pass_at, by_length, out_dir)


def run_skillrise_eval(env_id: str, agent: Any, spec: SkillRiseSpec, *, out_dir: str | Path,
                       env_kwargs: dict[str, Any] | None = None, **evaluate_kwargs: Any) -> SkillRiseReport:
    """Evaluate ``agent`` on SkillRise trials over ``env_id`` and report success per position
    (the ``skillrise`` sweep, :func:`skillrise_sweep`; it also writes ``sweep.json``).

    ``evaluate_kwargs`` go to :func:`~agentgym_suite.evaluation.runner.evaluate`; the turn limit
    defaults to a whole trial's (K tasks of ``turns_per_task`` turns plus K-1 Curate turns).
    """
    from agentgym_suite.evaluation.sweep import run_sweep

    args = f"{spec.mode}:{spec.k}:{spec.turns_per_task}"
    result = run_sweep(env_id, agent, skillrise_sweep(), args=args, out_dir=out_dir, env_kwargs=env_kwargs,
                       **evaluate_kwargs)
    report: SkillRiseReport = result.outcome.value
    return report


def _skillrise_variants(args: str, env_id: str, env_kwargs: dict[str, Any], options: dict[str, Any]) -> list[Any]:
    from agentgym_suite.evaluation.sweep import Variant

    if env_id.startswith("SkillRise-"):
        raise ValueError("--skillrise takes the base env id (e.g. ALFWorld-v0), not SkillRise-v0.")
    spec = parse_spec(args)
    trial_kwargs = {"base_env_id": env_id, "base_env_kwargs": dict(env_kwargs), "mode": spec.mode, "k": spec.k,
                    "turns_per_task": spec.turns_per_task}
    turns = options.get("max_turns") or trial_turn_limit(spec.k, spec.turns_per_task)
    # one variant, run in the output directory itself (where --skillrise always wrote its trials)
    return [Variant(f"{spec.mode}:{spec.k}", trial_kwargs, env_id=SKILLRISE_ENV_ID, options={"max_turns": turns},
                    folder="", replace_kwargs=True)]


def _skillrise_aggregate(run: Any) -> Any:
    from agentgym_suite.evaluation.sweep import SweepOutcome

    spec = parse_spec(run.args)
    result = next(iter(run.results.values()))
    report = skillrise_report(result.records, spec, run.out_dir)
    report.result = result
    (run.out_dir / SKILLRISE_FILE).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return SweepOutcome(report.to_dict(), skillrise_table(report, title=f"{run.env_id} · {run.agent} · SkillRise {run.args}"),
                        [f"wrote {run.out_dir / SKILLRISE_FILE} and the trials in {result.out_dir / 'trajectories.jsonl'}"],
                        report)


def skillrise_sweep() -> Any:
    """``--sweep skillrise:MODE:K[:TURNS]`` (alias ``--skillrise``), offered for every env: SkillRise trials
    over the env in ``<out>/``, then success per position (``skillrise.json``)."""
    from agentgym_suite.evaluation.sweep import Sweep

    return Sweep("skillrise", "skillrise:sequence:K|repeat:K[:TURNS] (SkillRise trials over the env)",
                 _skillrise_variants, _skillrise_aggregate, any_env=True)


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}"


def skillrise_table(report: SkillRiseReport, title: str = "") -> Table:
    """One row per position / sequence length."""
    sequence = report.spec.mode == "sequence"
    table = Table(title=title or f"SkillRise {report.spec.mode}:{report.spec.k}",
                  caption=f"{report.trials} trials" + (f", {report.left_out} crashed and left out" if report.left_out else ""))
    if sequence:
        columns = ("length L", "Pass@1 of task L %", "mean success of tasks 1..L %")
    else:
        columns = ("attempt a", "success at attempt a %", "solved within a attempts %")
    for column in columns:
        table.add_column(column, justify="right")
    for entry in report.success_by_length:
        last = entry["mean_success"] if sequence else entry["solved_within"]
        table.add_row(str(entry["length"]), _pct(entry["last_task"]), _pct(last))
    return table


__all__ = ["SKILLRISE_ENV_ID", "SKILLRISE_FILE", "skillrise_sweep", "SkillRiseReport", "SkillRiseSpec", "parse_spec", "position_results",
           "run_skillrise_eval", "skillrise_report", "skillrise_table"]

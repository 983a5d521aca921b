"""The SkillRise sweep, offered for every env: ``agentgym eval <ID> --sweep skillrise:sequence:K`` or
``skillrise:repeat:K`` (alias ``--skillrise``).

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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from agentgym_suite.core.sweeps import Sweep, SweepOutcome, SweepRequest, SweepTable, Variant, VariantResult
from agentgym_suite.envs.skillrise.env import MODES
from agentgym_suite.envs.skillrise.trial_env import DEFAULT_TURNS_PER_TASK, trial_turn_limit

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
    usage = "the skillrise sweep takes sequence:K or repeat:K (optionally :TURNS per task), e.g. sequence:3"
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
    result: VariantResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON written to ``skillrise.json``."""
        return {"mode": self.spec.mode, "k": self.spec.k, "turns_per_task": self.spec.turns_per_task,
                "trials": self.trials, "left_out_trials": self.left_out, "pass_at_position": self.pass_at_position,
                "success_by_length": self.success_by_length}


def position_results(record: Any, k: int) -> list[bool]:
    """Whether each of the ``k`` positions of a trial was solved (False for a position never finished)."""
    solved = [False] * k
    for turn in record.turns:
        position = turn.info.get("finished_position")
        if isinstance(position, int) and 0 <= position < k:
            solved[position] = bool(turn.info.get("finished_won"))
    return solved


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def skillrise_report(records: Sequence[Any], spec: SkillRiseSpec, out_dir: Path) -> SkillRiseReport:
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


def _variants(request: SweepRequest) -> list[Variant]:
    if request.env_id == SKILLRISE_ENV_ID:
        raise ValueError(f"the skillrise sweep takes the base env id (e.g. ALFWorld-v0), not {SKILLRISE_ENV_ID}.")
    spec = parse_spec(request.args)
    trial_kwargs = {"base_env_id": request.env_id, "base_env_kwargs": dict(request.env_kwargs), "mode": spec.mode,
                    "k": spec.k, "turns_per_task": spec.turns_per_task}
    turns = request.options.get("max_turns") or trial_turn_limit(spec.k, spec.turns_per_task)
    # one variant, run in the output directory itself (where --skillrise always wrote its trials)
    return [Variant(f"{spec.mode}:{spec.k}", trial_kwargs, env_id=SKILLRISE_ENV_ID, options={"max_turns": turns},
                    folder="", replace_kwargs=True)]


def _aggregate(request: SweepRequest, results: dict[str, VariantResult]) -> SweepOutcome:
    spec = parse_spec(request.args)
    result = next(iter(results.values()))
    report = skillrise_report(result.records, spec, request.out_dir)
    report.result = result
    return SweepOutcome(report.to_dict(),
                        skillrise_table(report, title=f"{request.env_id} · {request.agent} · SkillRise {request.args}"),
                        [f"wrote the trials in {result.out_dir / 'trajectories.jsonl'}"], {SKILLRISE_FILE: report.to_dict()},
                        report)


def skillrise_sweep() -> Sweep:
    """``--sweep skillrise:MODE:K[:TURNS]`` (alias ``--skillrise``), offered for every env: SkillRise trials
    over the env in ``<out>/``, then success per position (``skillrise.json``)."""
    return Sweep("skillrise", "skillrise:sequence:K|repeat:K[:TURNS] (SkillRise trials over the env)", _variants,
                 _aggregate, any_env=True, alias="--skillrise", alias_metavar="MODE:K",
                 alias_help="alias of --sweep skillrise:MODE:K. SkillRise evaluation: sequence:K (K related tasks, easier "
                            "to harder, with the model's skill document curated and carried between them) or repeat:K "
                            "(one task K times); optional :TURNS per task (default 10). Prints success per position and "
                            "against sequence length")


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}"


def skillrise_table(report: SkillRiseReport, title: str = "") -> SweepTable:
    """One row per position / sequence length."""
    sequence = report.spec.mode == "sequence"
    table = SweepTable(title=title or f"SkillRise {report.spec.mode}:{report.spec.k}", columns=[],
                       caption=f"{report.trials} trials" + (f", {report.left_out} crashed and left out" if report.left_out else ""))
    if sequence:
        columns = ("length L", "Pass@1 of task L %", "mean success of tasks 1..L %")
    else:
        columns = ("attempt a", "success at attempt a %", "solved within a attempts %")
    table.columns = list(columns)
    for entry in report.success_by_length:
        last = entry["mean_success"] if sequence else entry["solved_within"]
        table.rows.append([str(entry["length"]), _pct(entry["last_task"]), _pct(last)])
    return table


__all__ = ["SKILLRISE_ENV_ID", "SKILLRISE_FILE", "SkillRiseReport", "SkillRiseSpec", "parse_spec", "position_results",
           "skillrise_report", "skillrise_sweep", "skillrise_table"]

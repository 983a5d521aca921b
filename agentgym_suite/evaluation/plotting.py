"""``agentgym plot``: success rate per env across evaluation runs and across training steps.

Formats read from each directory given (any mix; a directory may hold several):

* ``DIR/summary.json`` — an ``agentgym eval`` summary: one bar for its ``env_id``, labelled with
  the directory name.
* ``DIR/step_N/summary.json`` (also ``step-N``, ``checkpoint-N``) — eval summaries per training
  step: one line per env over ``N``.
* ``DIR/metrics.jsonl`` — one JSON object per line with a ``step`` and a success rate, given as
  ``success_rate`` (env from ``env_id``/``env``, else the directory name) or as keys
  ``eval/success_rate`` / ``eval/<ENV>/success_rate``: one line per env over steps.

Lines of ``metrics.jsonl`` that are not JSON objects with those keys are skipped.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_STEP_DIR = re.compile(r"^(?:step|checkpoint)[-_](\d+)$")
_EVAL_KEY = re.compile(r"^eval/(?:(?P<env>.+)/)?success_rate$")


@dataclass
class RunPoint:
    """One finished evaluation: a bar in the plot."""

    run: str
    env_id: str
    success_rate: float


@dataclass
class StepSeries:
    """Success rate of one env over training steps of one run: a line in the plot."""

    run: str
    env_id: str
    points: list[tuple[int, float]] = field(default_factory=list)


def _load_summary(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("success_rate"), (int, float)) else None


def _metrics_points(path: Path, run: str) -> dict[str, list[tuple[int, float]]]:
    """Env -> (step, success rate) pairs from a ``metrics.jsonl``."""
    found: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or not isinstance(row.get("step"), (int, float)):
            continue
        step = int(row["step"])
        if isinstance(row.get("success_rate"), (int, float)):
            env = str(row.get("env_id") or row.get("env") or run)
            found[env].append((step, float(row["success_rate"])))
        for key, value in row.items():
            match = _EVAL_KEY.match(str(key))
            if match and isinstance(value, (int, float)):
                found[match.group("env") or run].append((step, float(value)))
    return found


def collect(run_dirs: list[str | Path]) -> tuple[list[RunPoint], list[StepSeries]]:
    """Read every supported file under ``run_dirs``.

    Raises:
        FileNotFoundError: a directory holds none of the supported files.
    """
    finals: list[RunPoint] = []
    series: list[StepSeries] = []
    for raw in run_dirs:
        base = Path(raw)
        if base.is_file() and base.name == "summary.json":
            base = base.parent
        run = base.resolve().name or str(base)
        before = (len(finals), len(series))
        summary = _load_summary(base / "summary.json")
        if summary is not None:
            finals.append(RunPoint(run, str(summary.get("env_id", "?")), float(summary["success_rate"])))
        by_env: dict[str, list[tuple[int, float]]] = defaultdict(list)
        if base.is_dir():
            for child in base.iterdir():
                match = _STEP_DIR.match(child.name)
                step_summary = _load_summary(child / "summary.json") if match and child.is_dir() else None
                if step_summary is not None:
                    by_env[str(step_summary.get("env_id", "?"))].append((int(match.group(1)), float(step_summary["success_rate"])))
        if (base / "metrics.jsonl").is_file():
            for env, points in _metrics_points(base / "metrics.jsonl", run).items():
                by_env[env].extend(points)
        for env, points in sorted(by_env.items()):
            series.append(StepSeries(run, env, sorted(set(points))))
        if (len(finals), len(series)) == before:
            raise FileNotFoundError(
                f"{base}: found no summary.json, step_N/summary.json or metrics.jsonl with a success rate. "
                "Point `agentgym plot` at directories written by `agentgym eval` or by training."
            )
    return finals, series


def plot_runs(run_dirs: list[str | Path], out: str | Path, title: str = "success rate") -> Path:
    """Plot the success rates found in ``run_dirs`` to a PNG at ``out`` and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finals, series = collect(run_dirs)
    panels = int(bool(finals)) + int(bool(series))
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.5), squeeze=False)
    column = 0
    if finals:
        ax = axes[0][column]
        column += 1
        envs = sorted({p.env_id for p in finals})
        runs = list(dict.fromkeys(p.run for p in finals))
        width = 0.8 / len(runs)
        for i, run in enumerate(runs):
            values = {p.env_id: p.success_rate for p in finals if p.run == run}
            xs = [e + (i - (len(runs) - 1) / 2) * width for e in range(len(envs))]
            ax.bar(xs, [values.get(env, 0.0) for env in envs], width, label=run)
        ax.set_xticks(range(len(envs)), envs, rotation=20, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("success rate")
        ax.set_title("per env, across runs")
        ax.legend(fontsize="small")
    if series:
        ax = axes[0][column]
        for item in series:
            steps, values = zip(*item.points)
            label = item.env_id if item.env_id == item.run else f"{item.run} · {item.env_id}"
            ax.plot(steps, values, marker="o", label=label)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("training step")
        ax.set_ylabel("success rate")
        ax.set_title("across training steps")
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target

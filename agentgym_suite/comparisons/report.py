"""The comparison's report, computed from the saved episodes only.

Every success rate is counted from the held-out episode files the runs wrote
(``eval_trajectories/step_XXXXXX.jsonl``), with its Wilson 95 % interval
(:func:`~agentgym_suite.demo.stats.wilson_interval`); the paired comparison against the
reference method (GRPO when it is compared) matches episodes by held-out task and episode seed
and applies McNemar's exact test (:mod:`~agentgym_suite.comparisons.paired`). Step times come
from ``step_times.jsonl``, tokens from the training episodes' files, peak memory from the unit's
own process. Running :func:`write_report` again on the same folder gives the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.comparisons.paired import paired_comparison
from agentgym_suite.comparisons.settings import CompareSettings, compare_command
from agentgym_suite.comparisons.unit import UNIT_FILE
from agentgym_suite.demo.stats import wilson_interval
from agentgym_suite.trainers.step_profile import read_step_times
from agentgym_suite.trainers.trajectory_log import read_step

REFERENCE = "grpo"
"""The method every other is compared with, when it is part of the comparison."""


def held_out_outcomes(path: Path) -> dict[str, bool]:
    """``task_id#seed -> won`` of one held-out evaluation file."""
    return {f"{r['task_id']}#{r['seed']}": bool(r["won"]) for r in read_step(path)}


def success(outcomes: dict[str, bool]) -> dict[str, Any]:
    """Won/total of the outcomes with the success rate and its Wilson 95 % interval."""
    n, won = len(outcomes), sum(outcomes.values())
    low, high = wilson_interval(won, n)
    return {"episodes": n, "won": won, "success_rate": won / n if n else 0.0, "ci_low": low, "ci_high": high}


def evaluations(run_dir: Path) -> dict[int, dict[str, bool]]:
    """Held-out outcomes of a run by step."""
    files = sorted((run_dir / "eval_trajectories").glob("step_*.jsonl"))
    return {int(f.stem.split("_")[1].split(".")[0]): held_out_outcomes(f) for f in files if "rank" not in f.stem}


def training_cost(run_dir: Path) -> dict[str, Any]:
    """Mean step time, tokens per second (prompt + completion tokens of the training rollouts over
    the steps' wall time) and the unit's peak memory."""
    steps = read_step_times(run_dir / "step_times.jsonl")
    wall = sum(float(s["wall_s"]) for s in steps)
    tokens = sum(turn["prompt_tokens"] + turn["completion_tokens"]
                 for f in sorted((run_dir / "trajectories").glob("step_*.jsonl")) for episode in read_step(f)
                 for turn in episode["turns"])
    unit = json.loads((run_dir / UNIT_FILE).read_text())
    return {"steps": len(steps), "step_s": wall / len(steps) if steps else 0.0, "train_s": wall, "tokens": tokens,
            "tokens_per_s": tokens / wall if wall else 0.0, "peak_rss_mb": unit.get("peak_rss_mb"),
            "peak_gpu_mb": unit.get("peak_gpu_mb"), "unit_wall_s": unit.get("wall_s")}


def collect(out: Path, settings: CompareSettings) -> dict[str, Any]:
    """Every number of the report, from the files under ``out``."""
    reference = REFERENCE if REFERENCE in settings.methods else settings.methods[0]
    start = {seed: evaluations(out / "start" / f"seed{seed}").get(0, {}) for seed in settings.seeds}
    runs: dict[str, dict[int, Any]] = {}
    finals: dict[str, dict[int, dict[str, bool]]] = {}
    for method in settings.methods:
        runs[method], finals[method] = {}, {}
        for seed in settings.seeds:
            run_dir = out / "runs" / method / f"seed{seed}"
            if not (run_dir / UNIT_FILE).is_file():
                continue
            points = evaluations(run_dir)
            last = max(points)
            finals[method][seed] = points[last]
            curve = [(0, success(start[seed])["success_rate"])] if start[seed] else []
            curve += [(step, success(o)["success_rate"]) for step, o in sorted(points.items())]
            gain = paired_comparison(start[seed], points[last]).as_dict() if start[seed] else None
            runs[method][seed] = {"final_step": last, "final": success(points[last]), "curve": curve,
                                  "gain_over_start": gain,
                                  **training_cost(run_dir),
                                  "command": compare_command(settings, methods=[method], seeds=[seed]),
                                  "episodes_file": str(run_dir / "eval_trajectories" / f"step_{last:06d}.jsonl")}
    summary, paired = {}, {}
    for method in settings.methods:
        done = runs[method]
        pooled = {f"{seed}/{k}": v for seed, o in finals[method].items() for k, v in o.items()}
        summary[method] = {"seeds": sorted(done), "final": success(pooled),
                           "step_s": _mean([r["step_s"] for r in done.values()]),
                           "tokens_per_s": _mean([r["tokens_per_s"] for r in done.values()]),
                           "peak_rss_mb": max((r["peak_rss_mb"] or 0.0 for r in done.values()), default=0.0)}
        if method == reference:
            continue
        per_seed = {seed: paired_comparison(finals[reference][seed], finals[method][seed]).as_dict()
                    for seed in settings.seeds if seed in finals[reference] and seed in finals[method]}
        ref_pooled = {f"{seed}/{k}": v for seed, o in finals[reference].items() for k, v in o.items()}
        paired[method] = {"per_seed": per_seed, "pooled": paired_comparison(ref_pooled, pooled).as_dict()}
    return {"command": compare_command(settings), "reference": reference, "methods": settings.methods,
            "seeds": settings.seeds, "start": {seed: success(o) for seed, o in start.items() if o},
            "start_command": compare_command(settings, methods=[settings.methods[0]]),
            "runs": runs, "summary": summary, "paired": paired}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _interval(s: dict[str, Any]) -> str:
    return f"{_pct(s['success_rate'])} [{_pct(s['ci_low'])}, {_pct(s['ci_high'])}] ({s['won']}/{s['episodes']})"


def plot_curves(data: dict[str, Any], path: Path) -> None:
    """Held-out success against the training step, one line per method (mean over its seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for method, seeds in data["runs"].items():
        by_step: dict[int, list[float]] = {}
        for run in seeds.values():
            for step, rate in run["curve"]:
                by_step.setdefault(int(step), []).append(rate)
        steps = sorted(by_step)
        ax.plot(steps, [100 * _mean(by_step[s]) for s in steps], marker="o", label=f"{method} ({len(seeds)} seeds)")
    ax.set_xlabel("training step")
    ax.set_ylabel("held-out success (%), mean over seeds")
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def markdown(data: dict[str, Any]) -> str:
    """The report as Markdown."""
    lines = ["# Credit plug-ins compared", "", "Reproduce everything (finished runs are kept; delete a run's folder to "
             "train it again):", "", f"    {data['command']}", "",
             "Held-out success with Wilson 95 % intervals; every number is counted from the saved held-out episodes.",
             "", "## Starting weights (step 0, the same for every method)", "", "| seed | held-out success |", "|---|---|"]
    lines += [f"| {seed} | {_interval(s)} |" for seed, s in data["start"].items()]
    lines += ["", f"Command: `{data['start_command']}`", "", "## Per method and seed (last evaluation)", "",
              "| method | seed | step | held-out success | step time | tokens/s | peak memory | command |",
              "|---|---|---|---|---|---|---|---|"]
    for method, seeds in data["runs"].items():
        for seed, run in seeds.items():
            lines.append(f"| {method} | {seed} | {run['final_step']} | {_interval(run['final'])} | {run['step_s']:.1f} s "
                         f"| {run['tokens_per_s']:.0f} | {run['peak_rss_mb']:.0f} MiB | `{run['command']}` |")
    lines += ["", "## Per method (all seeds pooled)", "", "| method | seeds | held-out success | mean step time | tokens/s "
              "| peak memory |", "|---|---|---|---|---|---|"]
    for method, s in data["summary"].items():
        lines.append(f"| {method} | {len(s['seeds'])} | {_interval(s['final'])} | {s['step_s']:.1f} s | "
                     f"{s['tokens_per_s']:.0f} | {s['peak_rss_mb']:.0f} MiB |")
    lines += ["", "## Gain over the starting weights (McNemar exact, the same held-out episodes at step 0 and at the end)",
              "", "| method | seed | pairs | lost after (won at start) | won after (lost at start) | difference | p-value | "
              "intervals disjoint |", "|---|---|---|---|---|---|---|---|"]
    for method, seeds in data["runs"].items():
        for seed, run in seeds.items():
            gain, start = run["gain_over_start"], data["start"].get(seed)
            if gain is None or start is None:
                continue
            disjoint = run["final"]["ci_low"] > start["ci_high"] or run["final"]["ci_high"] < start["ci_low"]
            lines.append(f"| {method} | {seed} | {gain['pairs']} | {gain['reference_only']} | {gain['method_only']} | "
                         f"{100 * gain['difference']:+.1f} pts | {gain['p_value']:.3g} | {'yes' if disjoint else 'no'} |")
    lines += ["", f"## Paired against {data['reference']} (McNemar exact, same held-out tasks and episode seeds)", "",
              f"b: pairs only {data['reference']} won; c: pairs only the method won.", "",
              "| method | seed | pairs | b | c | difference | p-value |", "|---|---|---|---|---|---|---|"]
    for method, result in data["paired"].items():
        for seed, p in [*result["per_seed"].items(), ("pooled", result["pooled"])]:
            lines.append(f"| {method} | {seed} | {p['pairs']} | {p['reference_only']} | {p['method_only']} | "
                         f"{100 * p['difference']:+.1f} pts | {p['p_value']:.3g} |")
    lines += ["", "## Learning curves", "", "![held-out success by step](learning_curves.png)", "",
              "Step time: mean wall time of a training step (rollouts, passes, update). Tokens/s: prompt + completion "
              "tokens of the training rollouts over the steps' wall time. Peak memory: the run's process (resident "
              "set on the CPU). Timings depend on how busy the machine was."]
    return "\n".join(lines) + "\n"


def write_report(out: Path, settings: CompareSettings) -> Path:
    """Write ``report.json``, ``report.md`` and ``learning_curves.png`` under ``out``; returns the Markdown path."""
    data = collect(out, settings)
    (out / "report.json").write_text(json.dumps(data, indent=2, default=str))
    plot_curves(data, out / "learning_curves.png")
    path = out / "report.md"
    path.write_text(markdown(data))
    return path

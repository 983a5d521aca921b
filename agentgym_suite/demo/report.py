"""The demo's report: a before/after table, a learning curve, the viewer page, and the
command behind every number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROWS = (("random", "random agent"), ("oracle", "oracle"), ("before", "model before training"),
        ("after", "model after training"), ("alfworld_before", "model before (ALFWorld)"),
        ("alfworld_after", "model after (ALFWorld)"))


CURVES = (("episodes/success_rate", "success rate (training rollouts)"), ("reward", "mean episode return"))
DIAGNOSTICS = ("loss", "credit/sdar/teacher_gap_mean", "credit/sdar/gate_mean", "credit/agentopsd/multiplier_mean",
               "episodes/invalid_action_rate", "entropy")


def _series(history: list[dict[str, Any]], key: str) -> list[tuple[float, float]]:
    return [(float(h["step"]), float(h[key])) for h in history if key in h and "step" in h]


def _learning_curve(history: list[dict[str, Any]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not any(_series(history, key) for key, _ in CURVES):
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    for key, label in CURVES:
        points = _series(history, key)
        if points:
            left.plot(*zip(*points), marker="o", label=label)
    left.set_ylim(-0.05, max(1.05, max((v for k, _ in CURVES for _, v in _series(history, k)), default=1) + 0.05))
    left.set_title("task success during training")
    for key in DIAGNOSTICS:
        points = _series(history, key)
        if points:
            right.plot(*zip(*points), marker=".", label=key)
    right.set_title("loss and credit diagnostics")
    for ax in (left, right):
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _step_table(history: list[dict[str, Any]]) -> list[str]:
    keys = [k for k in ("episodes/success_rate", "reward", "loss", *DIAGNOSTICS[1:]) if any(k in h for h in history)]
    rows = [h for h in history if "step" in h and any(k in h for k in keys)]
    if not rows:
        return []
    lines = ["| step | " + " | ".join(keys) + " |", "|---:|" + "---:|" * len(keys)]
    for h in rows:
        lines.append(f"| {h['step']} | " + " | ".join(f"{float(h[k]):.4g}" if k in h else "" for k in keys) + " |")
    return lines


def write_report(out: Path, results: dict[str, Any]) -> Path:
    """Write ``report.md`` (and the PNG and viewer page it links) and print the table."""
    from agentgym_suite.evaluation.viewer import write_viewer

    settings = results["settings"]
    lines = [
        "# agentgym demo report",
        "",
        f"Model `{settings['model']}` on `{settings['env_id']}` ({settings['env_kwargs']}); held-out games are the "
        f"`test` split, training used the `train` split. Training: GRPO with the `{settings['credit']}` credit plug-in, "
        f"teacher context `{settings['teacher_context']}`, {settings['steps']} steps, group size {settings['group_size']}. "
        f"Total wall time {results['wall_time_s'] / 60:.1f} min. Every number below was produced by this run.",
        "",
        "| agent | tasks | success rate | mean score | mean turns | invalid-action rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    table = Table(title="agentgym demo")
    for column in ("agent", "tasks", "success", "score", "turns", "invalid"):
        table.add_column(column)
    for key, label in ROWS:
        if key not in results:
            continue
        s = results[key]
        cells = [str(s.get("episodes")), f"{s.get('success_rate', 0):.2f}", f"{s.get('mean_score', 0):.2f}",
                 f"{s.get('mean_turns', 0):.1f}", f"{s.get('invalid_action_rate', 0):.2f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        table.add_row(label, *cells)
    curve = out / "learning_curve.png"
    has_curve = _learning_curve(results["train"]["history"], curve)
    viewer = write_viewer(Path(results["after"]["out_dir"]), out / "trajectories.html")
    lines += ["", "## Learning curve", ""]
    lines.append(f"![learning curve]({curve.name})" if has_curve else "(no training metrics were logged)")
    lines += ["", "Per training step (from the trainer's log):", "", *_step_table(results["train"]["history"])]
    lines += ["", "## Trajectories", "", f"[{Path(viewer).name}]({Path(viewer).name}): every turn of the held-out "
              "evaluation after training (filters for won/lost).", "", "## Reproduce each number", ""]
    for key, label in ROWS:
        if key in results:
            lines += [f"- {label}:", "", f"  ```bash\n  {results[key]['command']}\n  ```", ""]
    lines += ["- training:", "", f"  ```bash\n  {results['train']['command']}\n  ```", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    Console().print(table)
    return report

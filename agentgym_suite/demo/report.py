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


def _learning_curve(history: list[dict[str, Any]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history if "reward" in h or "episodes/success_rate" in h]
    if not steps:
        return False
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("reward", "mean episode return"), ("episodes/success_rate", "success rate (train rollouts)")):
        points = [(h["step"], h[key]) for h in history if key in h]
        if points:
            ax.plot(*zip(*points), marker="o", label=label)
    ax.set_xlabel("training step")
    ax.set_title("GRPO training on the generated TextWorld family")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


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

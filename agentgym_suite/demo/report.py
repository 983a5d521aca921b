"""The demo's report: the before/after table with Wilson intervals (computed from the saved
episodes), the held-out learning curve, the per-step time profile, the viewer page, and the
command behind every number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentgym_suite.demo.stats import episodes_success, intervals_overlap
from agentgym_suite.trainers.step_profile import PHASES

ROWS = (("random", "random agent"), ("oracle", "oracle"), ("before", "model before training"),
        ("after_sft", "model after SFT (behavioural cloning)"), ("after", "model after SFT + GRPO"))
"""The evaluations of the table, in order, with their labels."""

COLORS = {"rollout_generation": "#4c72b0", "env_steps": "#55a868", "logprob_passes": "#8172b2",
          "forward_backward": "#c44e52", "optimizer": "#dd8452", "logging": "#937860", "other": "#bbbbbb"}


def held_out_table(out: Path, results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Success and Wilson interval of every evaluation, recomputed from its ``trajectories.jsonl``."""
    return {key: episodes_success(Path(results[key]["out_dir"]) / "trajectories.jsonl")
            for key, _ in ROWS if key in results}


def held_out_curve(table: dict[str, dict[str, Any]], results: dict[str, Any]) -> list[dict[str, Any]]:
    """Held-out success over training: before (step 0), after SFT (its steps), GRPO's evaluations
    during training (after SFT's steps + the GRPO step), after GRPO."""
    sft_steps = len(results["sft"]["step_times"])
    grpo_steps = len(results["grpo"]["step_times"])
    points = [{"x": 0, "stage": "before", "success_rate": table["before"]["success_rate"],
               "episodes": table["before"]["episodes"]},
              {"x": sft_steps, "stage": "after SFT", "success_rate": table["after_sft"]["success_rate"],
               "episodes": table["after_sft"]["episodes"]}]
    for h in results["grpo"]["history"]:
        if "eval_success_rate" in h and 0 < int(h["step"]) < grpo_steps:
            points.append({"x": sft_steps + int(h["step"]), "stage": f"GRPO step {h['step']} (during training)",
                           "success_rate": float(h["eval_success_rate"]), "episodes": int(h.get("eval_episodes", 0))})
    points.append({"x": sft_steps + grpo_steps, "stage": "after GRPO", "success_rate": table["after"]["success_rate"],
                   "episodes": table["after"]["episodes"]})
    return points


def _plot_curve(points: list[dict[str, Any]], table: dict[str, dict[str, Any]], results: dict[str, Any],
                path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sft_steps = len(results["sft"]["step_times"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    xs = [p["x"] for p in points]
    left.plot(xs, [p["success_rate"] for p in points], marker="o", color="#c44e52", label="held-out success")
    for key, x in (("before", 0), ("after_sft", sft_steps), ("after", xs[-1])):
        row = table[key]
        left.errorbar([x], [row["success_rate"]], yerr=[[max(0.0, row["success_rate"] - row["ci_low"])],
                                                        [max(0.0, row["ci_high"] - row["success_rate"])]],
                      color="#c44e52", capsize=4)
    train = [(sft_steps + int(h["step"]), float(h["episodes/success_rate"])) for h in results["grpo"]["history"]
             if "episodes/success_rate" in h]
    if train:
        left.plot(*zip(*train), marker=".", linestyle="--", color="#4c72b0", label="GRPO training rollouts")
    for key, style in (("random", ":"), ("oracle", "-.")):
        if key in table:
            left.axhline(table[key]["success_rate"], linestyle=style, color="grey", linewidth=1, label=key)
    left.axvline(sft_steps, color="black", linewidth=0.6)
    for g, x in zip(gains(table)[:2], (sft_steps / 2, (sft_steps + xs[-1]) / 2)):
        left.annotate(f"{g['stage'].split(' (')[0]}\n{100 * g['gain']:+.1f} pts", (x, 0.02), ha="center", fontsize=7)
    left.set_ylim(-0.03, 1.05)
    left.set_xlabel("training step (SFT, then GRPO)")
    left.set_title("task success (95% Wilson intervals)")
    left.legend(fontsize=7)
    sft_loss = [(int(h["step"]), float(h["loss"])) for h in results["sft"]["history"] if "loss" in h and "step" in h]
    if sft_loss:
        right.plot(*zip(*sft_loss), marker=".", label="SFT loss")
    grpo_loss = [(sft_steps + int(h["step"]), float(h["loss"])) for h in results["grpo"]["history"] if "loss" in h]
    if grpo_loss:
        right.plot(*zip(*grpo_loss), marker=".", label="GRPO loss")
    right.axvline(sft_steps, color="black", linewidth=0.6)
    right.set_xlabel("training step")
    right.set_title("training loss")
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_profile(steps: list[tuple[str, dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(steps) + 2), 3.8))
    labels = [label for label, _ in steps]
    bottom = [0.0] * len(steps)
    for phase in PHASES:
        heights = [float(record.get(phase, 0.0)) for _, record in steps]
        ax.bar(range(len(steps)), heights, bottom=bottom, color=COLORS[phase], label=phase.replace("_", " "))
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(steps)), labels, rotation=60, fontsize=7)
    ax.set_ylabel("seconds")
    ax.set_title("wall time of each training step, by phase")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _interval(row: dict[str, Any]) -> str:
    return f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"


def gains(table: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The gains between evaluations: SFT, GRPO and the total, each with whether the two
    intervals overlap."""
    pairs = (("SFT stage (behavioural cloning)", "before", "after_sft"), ("GRPO stage", "after_sft", "after"),
             ("total (before -> after SFT + GRPO)", "before", "after"))
    return [{"stage": name, "from": a, "to": b,
             "gain": table[b]["success_rate"] - table[a]["success_rate"],
             "overlap": intervals_overlap(table[a], table[b])} for name, a, b in pairs]


def stage_sentence(gain: dict[str, Any]) -> str:
    """One stage's own gain in words: points, whether the intervals overlap, and whether that is
    a measured gain (at least 15 points with disjoint intervals)."""
    measured = gain["gain"] >= 0.15 and not gain["overlap"]
    return (f"**{gain['stage']}: {100 * gain['gain']:+.1f} points** ({gain['from']} -> {gain['to']}); the two "
            f"intervals {'overlap' if gain['overlap'] else 'do not overlap'}"
            f"{': a measured gain' if measured else ''}.")


def _profile_rows(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return ([(f"SFT {r['step']}", r) for r in results["sft"]["step_times"]]
            + [(f"GRPO {r['step']}", r) for r in results["grpo"]["step_times"]])


def write_report(out: Path, results: dict[str, Any]) -> Path:
    """Write ``report.md`` (and the PNGs and viewer page it links) and print the table."""
    from agentgym_suite.evaluation.viewer import write_viewer

    settings = results["settings"]
    table = held_out_table(out, results)
    found = gains(table)
    lines = [
        "# agentgym demo report",
        "",
        f"Model `{settings['model']}` on `{settings['env_id']}` ({settings['env_kwargs']}). Held-out: "
        f"{settings['eval_episodes']} games of the `test` split (one episode each); training: {settings['train_games']} "
        f"games of the `train` split, generated from a disjoint seed range. Seed {settings['seed']}. "
        f"Total wall time {results['wall_time_s'] / 60:.1f} min, CPU time {results.get('cpu_s', 0) / 60:.1f} min "
        f"(load average at the end {results.get('load', 'n/a')}; on a machine shared with other work the wall "
        f"time grows, the CPU time does not).",
        "",
        f"Recipe: behavioural cloning on the oracle's episodes of the training games (TRL `SFTTrainer`, LoRA r="
        f"{settings['lora_r']}, {results['sft']['rows']} episodes, {len(results['sft']['step_times'])} steps), then "
        f"GRPO with the `{settings['credit']}` credit plug-in from the SFT weights ({settings['steps']} steps of "
        f"{settings['tasks_per_step']} tasks x {settings['group_size']} rollouts at temperature "
        f"{settings.get('temperature', 1.0)}{', dynamic sampling' if settings.get('dynamic_sampling') else ''}). "
        f"Recipe `{settings.get('recipe', 'full-cloning')}`.",
        "",
        "## Held-out success",
        "",
        "Success rates and Wilson 95 % intervals are computed from each evaluation's saved episodes "
        "(`eval/<name>/trajectories.jsonl`).",
        "",
        "| agent | episodes | won | success | Wilson 95 % | mean turns | invalid-action rate |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    console_table = Table(title="agentgym demo: held-out success")
    for column in ("agent", "episodes", "won", "success", "95% interval"):
        console_table.add_column(column)
    for key, label in ROWS:
        if key not in table:
            continue
        row, summary = table[key], results[key]
        lines.append(f"| {label} | {row['episodes']} | {row['won']} | {_pct(row['success_rate'])} | {_interval(row)} | "
                     f"{summary.get('mean_turns', 0):.2f} | {summary.get('invalid_action_rate', 0):.2f} |")
        console_table.add_row(label, str(row["episodes"]), str(row["won"]), _pct(row["success_rate"]), _interval(row))
    lines += ["", "| gain | success points | intervals overlap |", "|---|---:|---|"]
    for g in found:
        lines.append(f"| {g['stage']} | {100 * g['gain']:+.1f} | {'yes' if g['overlap'] else 'no'} |")
    lines += [""] + [f"- {stage_sentence(g)}" for g in found]

    curve = held_out_curve(table, results)
    _plot_curve(curve, table, results, out / "learning_curve.png")
    lines += ["", "## Learning curve", "", "![learning curve](learning_curve.png)", "",
              "| training step | stage | held-out success | episodes |", "|---:|---|---:|---:|"]
    for p in curve:
        lines.append(f"| {p['x']} | {p['stage']} | {_pct(p['success_rate'])} | {p['episodes']} |")

    steps = _profile_rows(results)
    _plot_profile(steps, out / "step_times.png")
    lines += ["", "## Per-step time profile", "", "![per-step time profile](step_times.png)", "",
              "| step | wall s | " + " | ".join(PHASES) + " |", "|---|---:|" + "---:|" * len(PHASES)]
    for label, record in steps:
        lines.append(f"| {label} | {record['wall_s']:.1f} | "
                     + " | ".join(f"{float(record.get(p, 0.0)):.2f}" for p in PHASES) + " |")
    stage_times = [("prepare games", results.get("prepare_s", 0.0))]
    stage_times += [(f"evaluate {k}", results[k].get("stage_s", 0.0)) for k, _ in ROWS if k in results]
    stage_times += [("SFT stage", results["sft"]["stage_s"]), ("GRPO stage (with its held-out evaluations)",
                                                                results["grpo"]["stage_s"])]
    lines += ["", "Wall time per stage:", "", "| stage | seconds |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.0f} |" for name, seconds in stage_times]

    viewer = write_viewer(Path(results["after"]["out_dir"]), out / "trajectories.html")
    lines += ["", "## Trajectories", "", f"[{Path(viewer).name}]({Path(viewer).name}): every turn of the held-out "
              "evaluation after training (filters for won/lost).", "", "## Reproduce each number", "",
              "- the whole demo (every number below comes out of it; deterministic for a seed):", "",
              f"  ```bash\n  {results['command']}\n  ```", ""]
    for key, label in ROWS:
        if key in results:
            lines += [f"- {label}:", "", f"  ```bash\n  {results[key]['command']}\n  ```", ""]
    lines += ["- SFT stage: part of the demo command above (`agentgym_suite.demo.oracle_sft`); its model is "
              f"`{results['sft']['model']}`.", "",
              "- GRPO stage (from the SFT model):", "", f"  ```bash\n  {results['grpo']['command']}\n  ```", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    console = Console()
    console.print(console_table)
    for g in found:
        console.print(f"{g['stage']}: {100 * g['gain']:+.1f} points (intervals overlap: {g['overlap']})")
    return report

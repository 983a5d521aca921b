"""Print an evaluation summary as a rich table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def summary_table(summary: dict[str, Any]) -> Table:
    """A two-column table of the headline metrics of ``summary`` (and one row per task type)."""
    split = f" · split {summary['split']}" if summary.get("split") else ""
    title = f"{summary.get('env_id', '?')}{split} · {summary.get('agent', '?')} · seed {summary.get('seed', '?')}"
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    k = summary.get("k", 1)
    crashed = summary.get("crashed") or 0
    success = summary.get("success_rate")
    rows: list[tuple[str, Any]] = [
        ("episodes", summary.get("episodes")),
        ("tasks", summary.get("tasks")),
        ("won / lost / crashed", " / ".join(str(summary.get(key, "-")) for key in ("won", "lost", "crashed"))),
        ("success rate", f"{_fmt(success)} ({crashed} crashed, left out)" if crashed else success),
        ("mean score", summary.get("mean_score")),
        ("mean turns", summary.get("mean_turns")),
        ("invalid action rate", summary.get("invalid_action_rate")),
        (f"pass@{k}", summary.get("pass@k")),
        (f"pass^{k}", summary.get("pass^k")),
        ("errors (crashed or judged)", summary.get("errors")),
        ("tokens/s", summary.get("tokens_per_s")),
        ("wall time (s)", summary.get("wall_time_s")),
        ("complete", summary.get("complete")),
    ]
    if summary.get("score_scale"):
        scale = summary["score_scale"]
        rows.insert(5, (f"average score (0-{scale:g})", _fmt(summary.get("mean_score_scaled"), 1)))
    if summary.get("unscorable_episodes"):
        rows.insert(3, ("not scorable (left out)", f"{summary['unscorable_episodes']} episodes, {summary.get('unscorable_tasks')} tasks"))
        rows.insert(5, ("success rate over all episodes", f"{_fmt(summary.get('success_rate_all_episodes'))} "
                        "(not scorable counted as failures)"))
    for name, value in rows:
        table.add_row(name, _fmt(value, 1 if name in ("tokens/s", "wall time (s)") else 3))
    for key, values in (summary.get("labels") or {}).items():
        table.add_row(key.replace("_", " "), ", ".join(values))
    overall = (summary.get("sequence_metrics") or {}).get("overall")
    if overall:
        triple = " / ".join(_fmt(overall.get(key)) for key in ("avg@k", "pass@k", "pass^k"))
        table.add_row(f"Avg@{k} / Pass@{k} / Pass^{k}", f"{triple} ({overall.get('subtasks')} subtasks)")
        for user, stats in (summary.get("by_sequence") or {}).items():
            triple = " / ".join(_fmt(stats.get(key)) for key in ("avg@k", "pass@k", "pass^k"))
            table.add_row(f"  user {user}", f"{triple} ({stats.get('subtasks')})")
    for kind, count in (summary.get("crash_kinds") or {}).items():
        table.add_row(f"  crashed: {kind}", str(count))
    if summary.get("task_type_macro_success_rate") is not None:
        table.add_row("mean over task types", _fmt(summary["task_type_macro_success_rate"]))
    for task_type, stats in (summary.get("by_task_type") or {}).items():
        table.add_row(f"  {task_type}", f"{_fmt(stats.get('success_rate'))} ({stats.get('episodes')})")
    return table


def reference_table(summary: dict[str, Any]) -> Table | None:
    """Published scores of the run's model on the run's split beside the run's own numbers (None when
    the env's card lists none for them)."""
    from agentgym_suite.evaluation.references import reference_rows

    rows = reference_rows(summary)
    if not rows:
        return None
    table = Table(title="published reference scores (same model, same split)")
    for column in ("split", "metric", "method", "published", "this run", "source"):
        table.add_column(column, overflow="fold")
    for row in rows:
        ref = row.reference
        measured = "-" if row.measured is None else f"{row.measured:.3f} ({row.episodes} episodes)"
        table.add_row(ref.split, ref.metric, ref.method or "-", f"{ref.value:.3f}", measured, ref.source)
    return table


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    """Print :func:`summary_table` to ``console`` (stdout by default), the split it ran, and the
    published reference scores of the same model and split when the env's card has any."""
    console = console or Console()
    console.print(summary_table(summary))
    if summary.get("split"):
        console.print(f"split: {summary['split']}", markup=False)
    references = reference_table(summary)
    if references is not None:
        console.print(references)
    from agentgym_suite.evaluation.model_accounting import model_calls_table, rescore_lines

    roles = model_calls_table(summary)
    if roles is not None:
        console.print(roles)
    for line in rescore_lines(summary):
        console.print(line, markup=False)
    served = (summary.get("model_calls") or {}).get("served_envs")
    if served:
        console.print(f"model-played roles: {served['note']}", markup=False)
    departures = summary.get("leaderboard_departures") or []
    if departures:
        console.print("Not comparable to the official leaderboard:")
        for reason in departures:
            console.print(f"  - {reason}", markup=False)

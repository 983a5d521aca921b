"""``trajectories.jsonl``: append-only, crash-safe storage of an evaluation's episodes.

Each line is one :class:`~agentgym_suite.rollout.records.Trajectory` (:meth:`~Trajectory.to_dict`),
keyed by task id and attempt (:attr:`~Trajectory.key`): what a resumed run skips. Files of the
earlier episode-record layout and rollout trajectory dumps are read too; lines without an
``attempt`` are numbered per task in file order.

Every episode is appended as one line, flushed and fsync'd before the next one starts, so a
killed run loses at most the episode in flight. Loading tolerates the damage a kill can do:
a last line cut short (or any line that is not a valid record) is dropped, kept aside in
``trajectories.jsonl.corrupt`` for inspection, and the file is rewritten without it before
anything new is appended. Duplicate keys keep their first record (the file is backed up the
same way). Nothing is backed up when nothing was damaged: crashed episodes removed to be run
again (``--retry-failed``) are moved to ``trajectories.retried.jsonl``, so their errors stay on
record.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from agentgym_suite.rollout.records import Trajectory, jsonl_line

TRAJECTORIES_FILE = "trajectories.jsonl"
RETRIED_FILE = "trajectories.retried.jsonl"
"""Where the crashed episodes a ``--retry-failed`` run plays again are kept."""
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.json"


@dataclass
class LoadReport:
    """What :meth:`TrajectoryStore.load` found besides the records."""

    dropped_lines: int = 0
    duplicates: int = 0
    removed_failed: int = 0
    unterminated: bool = False
    """The file did not end with a newline (a write was cut short)."""
    notes: list[str] = field(default_factory=list)


def read_records(path: str | Path) -> tuple[list[Trajectory], LoadReport]:
    """Read every valid record of a JSONL file, in file order, without modifying it.

    Lines that are not JSON objects with a ``task_id`` are counted in
    ``LoadReport.dropped_lines``; repeated keys after the first in ``duplicates``. Lines
    without an ``attempt`` (rollout trajectory records) are numbered per task in file order.
    """
    report = LoadReport()
    records: list[Trajectory] = []
    seen: set[str] = set()
    per_task: dict[str, int] = {}
    path = Path(path)
    if not path.exists():
        return records, report
    with path.open("rb") as handle:
        content = handle.read()
    report.unterminated = bool(content) and not content.endswith(b"\n")
    raw_lines = content.split(b"\n")
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw.decode("utf-8"))
            record = Trajectory.from_dict(data)
            if "attempt" not in data:
                record.attempt = per_task.get(record.task_id, 0)
        except (ValueError, TypeError, UnicodeDecodeError) as exc:
            report.dropped_lines += 1
            report.notes.append(f"line {number}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        if record.key in seen:
            report.duplicates += 1
            continue
        seen.add(record.key)
        per_task[record.task_id] = max(per_task.get(record.task_id, 0), record.attempt + 1)
        records.append(record)
    return records, report


class TrajectoryStore:
    """The ``trajectories.jsonl`` of one evaluation output directory."""

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / TRAJECTORIES_FILE

    def load(self, *, drop_failed: bool = False) -> tuple[dict[str, Trajectory], LoadReport]:
        """Load the finished episodes by key, repairing the file when it holds bad lines.

        Args:
            drop_failed: also remove crashed episodes (:attr:`~Trajectory.broken`) so they run
                again; they are appended to ``trajectories.retried.jsonl`` first.
        """
        records, report = read_records(self.path)
        removed: list[Trajectory] = []
        if drop_failed:
            removed = [r for r in records if r.broken]
            records = [r for r in records if not r.broken]
            report.removed_failed = len(removed)
        damaged = bool(report.dropped_lines or report.duplicates or report.unterminated)
        if damaged or removed:
            if removed:
                self._keep_retried(removed)
            self._rewrite(records, backup=damaged)
        return {r.key: r for r in records}, report

    def append(self, record: Trajectory) -> None:
        """Append one record as a line and force it to disk."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        line = jsonl_line(record)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def _keep_retried(self, records: list[Trajectory]) -> None:
        """Append the crashed records about to be run again to ``trajectories.retried.jsonl``."""
        with (self.out_dir / RETRIED_FILE).open("a", encoding="utf-8") as handle:
            for record in records:
                handle.write(jsonl_line(record))
            handle.flush()
            os.fsync(handle.fileno())

    def _rewrite(self, records: list[Trajectory], *, backup: bool = True) -> None:
        """Keep the original bytes aside (with ``backup``), then atomically replace the file with ``records``."""
        if backup and self.path.exists():
            backup = self.path.with_name(self.path.name + ".corrupt")
            with backup.open("ab") as out, self.path.open("rb") as src:
                out.write(src.read())
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(jsonl_line(record))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)



"""VitaBench 2.0 task sequences (temporally ordered sub-tasks per user).

Assumed format (the official files are on the HF hub only): ``vitabench/v2/<domain>/sequences.json``,
a JSON list of ``{"user_id": str, "subtasks": [task, ...]}`` where each task has the v1 task
fields (``id``, ``environment``, ``user_scenario``, ``instructions``, ``evaluation_criteria``)
plus ``timestamp`` (``YYYY-MM-DD HH:MM:SS``). Sub-tasks are ordered by timestamp; task ids are
``<user_id>/<index>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import data_dir
from agentgym_suite.core.errors import DataNotFoundError


def default_path(domain: str) -> Path:
    """Where the 2.0 sequences of ``domain`` are looked for."""
    return data_dir() / "vitabench" / "v2" / domain / "sequences.json"


def load_sequences(path: str | Path) -> dict[str, dict[str, Any]]:
    """Sub-tasks by ``<user_id>/<index>``, each with ``user_id`` and ``index`` added, in temporal order."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"VitaBench 2.0 sequences not found at {path}. Put sequences.json there (format: see agentgym_suite.envs.vitabench.sequences).")
    tasks: dict[str, dict[str, Any]] = {}
    for seq in json.loads(path.read_text(encoding="utf-8")):
        user = str(seq["user_id"])
        for index, sub in enumerate(sorted(seq["subtasks"], key=lambda t: str(t.get("timestamp", "")))):
            task = dict(sub)
            task.update(user_id=user, index=index, id=f"{user}/{index}")
            tasks[task["id"]] = task
    if not tasks:
        raise DataNotFoundError(f"{path} holds no sub-tasks.")
    return tasks

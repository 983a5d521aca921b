"""Loading the banking domain's files from ``$AGENTGYM_DATA/tau2/domains/banking_knowledge``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.errors import DataNotFoundError
from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.tool_docs import SOURCE_NAME

if TYPE_CHECKING:
    from agentgym_suite.envs.tau2.data import DomainData

FOLDER = "domains/banking_knowledge"
BANKING_FILES = (f"{FOLDER}/db.json", f"{FOLDER}/tasks", f"{FOLDER}/documents", f"{FOLDER}/prompts/components",
                 f"{FOLDER}/{SOURCE_NAME}")
"""What the domain cannot run without (``agentgym data fetch tau2`` places all of it)."""


UPSTREAM_ARCHIVE = "https://github.com/sierra-research/tau2-bench/archive/a2c024725189473d2d7cea3a5cfdbcc67478e41f.tar.gz"


def banking_root() -> Path:
    """``$AGENTGYM_DATA/tau2`` when it holds the banking domain; else an error that says what to fetch or place."""
    try:
        return benchmark_dir("tau2", *BANKING_FILES)
    except DataNotFoundError as exc:
        raise DataNotFoundError(
            f"{exc} The banking_knowledge domain needs, from {UPSTREAM_ARCHIVE}: data/tau2/domains/banking_knowledge/ "
            f"placed as $AGENTGYM_DATA/tau2/{FOLDER}/ (db.json, tasks/, documents/, prompts/), and "
            f"src/tau2/domains/banking_knowledge/tools.py placed as $AGENTGYM_DATA/tau2/{FOLDER}/{SOURCE_NAME}; "
            "`agentgym data fetch tau2` does both and checks them (`agentgym data verify tau2`).") from None


def load_task_files(tasks_dir: Path) -> dict[str, dict]:
    """Every ``task_*.json`` of ``tasks_dir`` by task id, in sorted file-name order (upstream's ``get_tasks``)."""
    tasks: dict[str, dict] = {}
    for path in sorted(tasks_dir.glob("task_*.json")):
        try:
            task = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataNotFoundError(f"{path} cannot be read as a task ({exc}); run `agentgym data verify tau2`, or place "
                                    "the file again from upstream's data/tau2/domains/banking_knowledge/tasks/.") from None
        tasks[str(task["id"])] = task
    if not tasks:
        raise DataNotFoundError(f"{tasks_dir} holds no task_*.json; `agentgym data fetch tau2` places upstream's tasks/.")
    return tasks


def load_banking(root: Path) -> DomainData:
    """The banking domain's tasks (one split, ``base``: all 97), database and folder.

    The tasks are read from ``tasks/task_*.json`` in file-name order, as upstream's ``get_tasks``
    reads them; the combined ``tasks.json`` beside them is not what upstream runs (13 of its 97
    tasks differ: required documents, scenarios, grading criteria, user tools)."""
    from agentgym_suite.envs.tau2.data import DomainData, user_guidelines

    folder = root / FOLDER
    tasks = load_task_files(folder / "tasks")
    db = R.complete(json.loads((folder / "db.json").read_text(encoding="utf-8")))
    guidelines, guidelines_tools = user_guidelines(root)
    return DomainData(domain="banking_knowledge", tasks=tasks, splits={"base": list(tasks)}, policy="",
                      guidelines=guidelines, guidelines_tools=guidelines_tools,
                      db_blob=pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL),
                      user_db_blob=pickle.dumps({}, protocol=pickle.HIGHEST_PROTOCOL), folder=folder)

"""Loading the banking domain's files from ``$AGENTGYM_DATA/tau2/domains/banking_knowledge``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.tool_docs import SOURCE_NAME

if TYPE_CHECKING:
    from agentgym_suite.envs.tau2.data import DomainData

FOLDER = "domains/banking_knowledge"
BANKING_FILES = (f"{FOLDER}/db.json", f"{FOLDER}/tasks.json", f"{FOLDER}/documents", f"{FOLDER}/prompts/components",
                 f"{FOLDER}/{SOURCE_NAME}")
"""What the domain cannot run without (``agentgym data fetch tau2`` places all of it)."""


def load_banking(root: Path) -> DomainData:
    """The banking domain's tasks (one split, ``base``: all 97), database and folder."""
    from agentgym_suite.envs.tau2.data import DomainData

    folder = root / FOLDER
    tasks = {str(t["id"]): t for t in json.loads((folder / "tasks.json").read_text(encoding="utf-8"))}
    db = R.complete(json.loads((folder / "db.json").read_text(encoding="utf-8")))
    guide = root / "user_simulator" / "simulation_guidelines_tools.md"
    return DomainData(domain="banking_knowledge", tasks=tasks, splits={"base": list(tasks)}, policy="",
                      guidelines=guide.read_text(encoding="utf-8") if guide.exists() else "",
                      db_blob=pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL),
                      user_db_blob=pickle.dumps({}, protocol=pickle.HIGHEST_PROTOCOL), folder=folder)

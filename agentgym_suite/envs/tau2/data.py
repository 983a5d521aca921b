"""Loading tau2 domain data (tasks, splits, policy, databases) from ``$AGENTGYM_DATA/tau2``.

Databases are parsed once per process and kept as pickled bytes, so each episode gets a
fresh, independent copy cheaply.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import benchmark_dir

DOMAINS = ("retail", "airline", "telecom", "mock")
IMPLEMENTED_DOMAINS = ("retail", "airline", "mock")
SPLITS = ("base", "train", "test")


@dataclass(frozen=True)
class DomainData:
    """Everything read from one domain's folder."""

    domain: str
    tasks: dict[str, dict[str, Any]]
    splits: dict[str, list[str]]
    policy: str
    guidelines: str
    db_blob: bytes
    user_db_blob: bytes

    @cached_property
    def pristine_db(self) -> dict[str, Any]:
        """The untouched database (shared and read-only: never hand it to a toolkit)."""
        return pickle.loads(self.db_blob)

    def fresh_db(self) -> dict[str, Any]:
        """A new, independent copy of the agent-side database."""
        return pickle.loads(self.db_blob)

    def fresh_user_db(self) -> dict[str, Any]:
        """A new, independent copy of the user-side database (empty when the domain has none)."""
        return pickle.loads(self.user_db_blob)


def load_domain(domain: str) -> DomainData:
    """Read a domain's data (cached per data directory).

    Raises:
        ValueError: for an unknown domain.
        NotImplementedError: for ``telecom`` (its user-device simulation is not implemented).
        DataNotFoundError: when the files are missing.
    """
    if domain not in DOMAINS:
        raise ValueError(f"domain={domain!r}; choose one of {IMPLEMENTED_DOMAINS}.")
    if domain not in IMPLEMENTED_DOMAINS:
        raise NotImplementedError(
            f"tau2 domain {domain!r} is not implemented in this suite yet: it needs the simulated user "
            f"device (phone settings, SIM, data, roaming) and its env assertions. Use one of {IMPLEMENTED_DOMAINS}."
        )
    root = benchmark_dir("tau2", f"domains/{domain}/tasks.json", f"domains/{domain}/db.json",
                         f"domains/{domain}/split_tasks.json", f"domains/{domain}/policy.md")
    return _load(str(root), domain)


@lru_cache(maxsize=8)
def _load(root_text: str, domain: str) -> DomainData:
    root = Path(root_text)
    folder = root / "domains" / domain
    tasks = {str(t["id"]): t for t in json.loads((folder / "tasks.json").read_text(encoding="utf-8"))}
    splits = {k: [str(i) for i in v] for k, v in json.loads((folder / "split_tasks.json").read_text(encoding="utf-8")).items()}
    db = json.loads((folder / "db.json").read_text(encoding="utf-8"))
    user_db_path = folder / "user_db.json"
    user_db = json.loads(user_db_path.read_text(encoding="utf-8")) if user_db_path.exists() else {}
    guidelines_path = root / "user_simulator" / "simulation_guidelines.md"
    guidelines = guidelines_path.read_text(encoding="utf-8") if guidelines_path.exists() else ""
    return DomainData(
        domain=domain,
        tasks=tasks,
        splits=splits,
        policy=(folder / "policy.md").read_text(encoding="utf-8"),
        guidelines=guidelines,
        db_blob=pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL),
        user_db_blob=pickle.dumps(user_db, protocol=pickle.HIGHEST_PROTOCOL),
    )

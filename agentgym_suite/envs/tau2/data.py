"""Loading tau2 domain data (tasks, splits, policy, databases) from ``$AGENTGYM_DATA/tau2``.

Databases are parsed once per process and kept as pickled bytes, so each episode gets a
fresh, independent copy cheaply.
"""

from __future__ import annotations

import json
import pickle
import tomllib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import benchmark_dir

DOMAINS = ("retail", "airline", "telecom", "telecom-workflow", "mock", "banking_knowledge")
IMPLEMENTED_DOMAINS = DOMAINS
POLICY_VARIANTS = {"telecom-workflow": ("telecom", "tech_support_workflow.md")}
"""Upstream's policy variants: domain name -> (data folder, tech-support part of the policy). ``telecom-workflow``
plays telecom's tasks with the flowchart-style tech-support workflow instead of the manual."""
NOT_IMPLEMENTED: dict[str, str] = {}
SPLITS = ("base", "train", "test")


def user_guidelines(root: Path) -> tuple[str, str]:
    """The customer simulator's guidelines without and with tools (``user_simulator/*.md``; '' when missing)."""
    folder = root / "user_simulator"
    texts = [(folder / name).read_text(encoding="utf-8") if (folder / name).exists() else ""
             for name in ("simulation_guidelines.md", "simulation_guidelines_tools.md")]
    return texts[0], texts[1]


@dataclass(frozen=True)
class DomainData:
    """Everything read from one domain's folder."""

    domain: str
    tasks: dict[str, dict[str, Any]]
    splits: dict[str, list[str]]
    policy: str
    guidelines: str
    """The customer simulator's guidelines (``simulation_guidelines.md``)."""
    db_blob: bytes
    user_db_blob: bytes
    folder: Path | None = None
    """The domain's data folder (the banking domain reads its knowledge base and prompt templates from it; every
    domain its tools' upstream source, when fetched)."""
    guidelines_tools: str = ""
    """The guidelines for a customer who has tools (``simulation_guidelines_tools.md``): upstream picks them whenever
    the task gives the customer any tool, in any domain."""

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
        DataNotFoundError: when the files are missing.
    """
    if domain in NOT_IMPLEMENTED:
        raise ValueError(NOT_IMPLEMENTED[domain])
    if domain not in DOMAINS:
        raise ValueError(f"domain={domain!r}; choose one of {IMPLEMENTED_DOMAINS}.")
    if domain == "banking_knowledge":
        from agentgym_suite.envs.tau2.banking.data import banking_root

        return _load(str(banking_root()), domain)
    folder, tech_support = POLICY_VARIANTS.get(domain, (domain, "tech_support_manual.md"))
    files = ((*TELECOM_FILES[:3], f"domains/telecom/{tech_support}") if folder == "telecom"
             else (f"domains/{folder}/db.json", f"domains/{folder}/policy.md"))
    root = benchmark_dir("tau2", f"domains/{folder}/tasks.json", f"domains/{folder}/split_tasks.json", *files)
    return _load(str(root), domain)


TELECOM_FILES = ("domains/telecom/db.toml", "domains/telecom/user_db.toml", "domains/telecom/main_policy.md",
                 "domains/telecom/tech_support_manual.md")
"""Telecom keeps its databases in TOML and its policy in two parts (main policy and tech-support manual)."""


def _telecom_parts(folder: Path, tech_support: str = "tech_support_manual.md") -> tuple[dict[str, Any], dict[str, Any], str, dict[str, dict[str, Any]]]:
    """Telecom's database, phone state, combined policy (main policy + ``tech_support``) and the extra
    tasks of ``tasks_small.json``."""
    db = tomllib.loads((folder / "db.toml").read_text(encoding="utf-8"))
    user_db = tomllib.loads((folder / "user_db.toml").read_text(encoding="utf-8"))
    policy = (f"<main_policy>\n{(folder / 'main_policy.md').read_text(encoding='utf-8')}\n</main_policy>\n"
              f"<tech_support_policy>\n{(folder / tech_support).read_text(encoding='utf-8')}\n</tech_support_policy>")
    small_path = folder / "tasks_small.json"
    small = json.loads(small_path.read_text(encoding="utf-8")) if small_path.exists() else []
    return db, user_db, policy, {str(t["id"]): t for t in small}


@lru_cache(maxsize=8)
def _load(root_text: str, domain: str) -> DomainData:
    root = Path(root_text)
    if domain == "banking_knowledge":
        from agentgym_suite.envs.tau2.banking.data import load_banking

        return load_banking(root)
    data_folder, tech_support = POLICY_VARIANTS.get(domain, (domain, "tech_support_manual.md"))
    folder = root / "domains" / data_folder
    tasks = {str(t["id"]): t for t in json.loads((folder / "tasks.json").read_text(encoding="utf-8"))}
    splits = {k: [str(i) for i in v] for k, v in json.loads((folder / "split_tasks.json").read_text(encoding="utf-8")).items()}
    if data_folder == "telecom":
        db, user_db, policy, extra_tasks = _telecom_parts(folder, tech_support)
        tasks = {**extra_tasks, **tasks}  # the "small" split's ids live in tasks_small.json
    else:
        db = json.loads((folder / "db.json").read_text(encoding="utf-8"))
        user_db_path = folder / "user_db.json"
        user_db = json.loads(user_db_path.read_text(encoding="utf-8")) if user_db_path.exists() else {}
        policy = (folder / "policy.md").read_text(encoding="utf-8")
    guidelines, guidelines_tools = user_guidelines(root)
    return DomainData(
        domain=data_folder,  # the tools' domain: a policy variant plays its base domain's tools
        tasks=tasks,
        splits=splits,
        policy=policy,
        guidelines=guidelines,
        guidelines_tools=guidelines_tools,
        db_blob=pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL),
        user_db_blob=pickle.dumps(user_db, protocol=pickle.HIGHEST_PROTOCOL),
        folder=folder,
    )

"""Read VitaBench tasks and prompt YAMLs from ``$AGENTGYM_DATA/vitabench``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from agentgym_suite.core.data import benchmark_dir

DOMAINS = ("delivery", "instore")


def check_domain(domain: str) -> str:
    """Return ``domain`` when supported, else explain the choices."""
    if domain not in DOMAINS:
        raise ValueError(f"Unknown VitaBench domain {domain!r}; choose one of {', '.join(DOMAINS)} (ota and cross_domain are not shipped).")
    return domain


@cache
def _load(path: str) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(Path(path).read_text(encoding="utf-8")))


def load_tasks(domain: str) -> dict[str, dict[str, Any]]:
    """Tasks of ``domain`` by id (``domains/<domain>/tasks_en.json``)."""
    rel = f"domains/{check_domain(domain)}/tasks_en.json"
    root = benchmark_dir("vitabench", rel)
    return {str(t["id"]): t for t in _load(str(root / rel))}


def load_prompt(name: str, language: str = "english") -> str:
    """One prompt template (``agent_system_prompt``, ``user_system_prompt``...) from ``prompts/``."""
    root = benchmark_dir("vitabench", f"prompts/{name}.yaml")
    return str(yaml.safe_load((root / "prompts" / f"{name}.yaml").read_text(encoding="utf-8"))[language])


def persona_text(task: dict[str, Any]) -> str:
    """The task's user profile as ``key: value`` lines."""
    profile = (task.get("user_scenario") or {}).get("user_profile") or {}
    return "\n".join(f"{k}: {v}" for k, v in profile.items())

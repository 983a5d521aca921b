"""Read VitaBench tasks and prompt YAMLs from ``$AGENTGYM_DATA/vitabench``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.errors import DataNotFoundError

DOMAINS = ("delivery", "instore")
LANGUAGES = {"english": "tasks_en.json", "chinese": "tasks.json"}
"""Task file of each language (upstream's default language is Chinese)."""


def check_domain(domain: str) -> str:
    """Return ``domain`` when supported, else explain the choices."""
    if domain not in DOMAINS:
        raise ValueError(f"Unknown VitaBench domain {domain!r}; choose one of {', '.join(DOMAINS)} (ota and cross_domain are not shipped).")
    return domain


@cache
def _load(path: str) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(Path(path).read_text(encoding="utf-8")))


def check_language(language: str) -> str:
    """Return ``language`` when supported, else explain the choices."""
    if language not in LANGUAGES:
        raise ValueError(f"Unknown VitaBench language {language!r}; choose one of {', '.join(LANGUAGES)}.")
    return language


def load_tasks(domain: str, language: str = "english") -> dict[str, dict[str, Any]]:
    """Tasks of ``domain`` by id (``domains/<domain>/tasks_en.json``, or ``tasks.json`` for Chinese)."""
    rel = f"domains/{check_domain(domain)}/{LANGUAGES[check_language(language)]}"
    try:
        root = benchmark_dir("vitabench", rel)
    except DataNotFoundError as exc:
        raise DataNotFoundError(
            f"{exc} VitaBench's {language} {domain} tasks are upstream's data/vita/domains/{domain}/{LANGUAGES[language]} "
            f"(meituan-longcat/vitabench at the commit in SOURCE.md); place that file at $AGENTGYM_DATA/vitabench/{rel}.") from exc
    path = root / rel
    return {str(t["id"]): t for t in _load(str(path))}


def load_prompt(name: str, language: str = "english") -> str:
    """One prompt template (``agent_system_prompt``, ``user_system_prompt``...) from ``prompts/``."""
    root = benchmark_dir("vitabench", f"prompts/{name}.yaml")
    return str(yaml.safe_load((root / "prompts" / f"{name}.yaml").read_text(encoding="utf-8"))[check_language(language)])


def persona_text(task: dict[str, Any]) -> str:
    """The task's user profile as ``key: value`` lines."""
    profile = (task.get("user_scenario") or {}).get("user_profile") or {}
    return "\n".join(f"{k}: {v}" for k, v in profile.items())

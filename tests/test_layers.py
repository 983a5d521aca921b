"""The package's subpackages sit on floors, and an import only ever goes down to a lower floor.

A module-level or function-level import of ``agentgym_suite.<x>`` from a module of another
subpackage must name a subpackage on a lower floor than its own. An import across a floor in
the other direction (or between two subpackages of one floor) is how cycles start: the agents
above the rollout engine, the engine catching the agents' errors, each importing the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agentgym_suite"
FLOORS: dict[str, int] = {
    "core": 0,
    "llm": 1, "registration": 1,
    "serving": 2,
    "rollout": 3,
    "envs": 4,
    "agents": 5, "vector": 5,
    "evaluation": 6, "trainers": 6, "integrations": 6,
    "demo": 7, "methods": 7,
    "comparisons": 8,
    "commands": 9, "cli": 9,
}
"""Floor of each subpackage (and top-level module); ``agentgym_suite/__init__.py`` registers the
envs and is above them all. ``methods`` holds packages that are one method whole (a credit plug-in
with its env, agent and evaluation extension): at or above the trainer floor, found through entry
points (``core/plugins.py``), never imported by a generic module."""


def _subpackage(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found |= {n.split(".")[1] for n in names if n.startswith("agentgym_suite.")}
    return found


def test_every_subpackage_has_a_floor() -> None:
    names = {_subpackage(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert names <= set(FLOORS), f"give {sorted(names - set(FLOORS))} a floor in FLOORS"


@pytest.mark.parametrize("path", sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_go_down(path: Path) -> None:
    own = _subpackage(path)
    upward = sorted(t for t in _imports(path) - {own} if t in FLOORS and FLOORS[t] >= FLOORS[own])
    assert not upward, (f"{path.relative_to(PACKAGE)} (floor {FLOORS[own]}) imports {upward} "
                        f"(floors {[FLOORS[t] for t in upward]}); move the shared name down instead")


SHARED_ENVS = "shared"
"""The one package under ``envs/`` that benchmark packages may import from each other's side."""


def _benchmark_package(path: Path) -> str | None:
    rel = path.relative_to(PACKAGE)
    return rel.parts[1] if len(rel.parts) > 2 and rel.parts[0] == "envs" else None


@pytest.mark.parametrize("path", sorted(p for p in (PACKAGE / "envs").rglob("*.py") if _benchmark_package(p)),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_benchmark_packages_do_not_import_each_other(path: Path) -> None:
    own = _benchmark_package(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found |= {n.split(".")[2] for n in names if n.startswith("agentgym_suite.envs.") and n.count(".") >= 2}
    others = sorted(found - {own, SHARED_ENVS})
    assert not others, (f"{path.relative_to(PACKAGE)} imports the benchmark package(s) {others}; move what they "
                        f"share into agentgym_suite/envs/{SHARED_ENVS}/")

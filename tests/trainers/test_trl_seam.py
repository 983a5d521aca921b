"""The TRL seam (``trainers/trl_seam.py``): the installed TRL has every private member the trainer
uses, the list names every such member the trainer modules touch, and a moved one fails clearly."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import pytest
import trl
from packaging.specifiers import SpecifierSet
from trl import GRPOTrainer

from agentgym_suite.trainers import trl_seam

ROOT = Path(__file__).resolve().parents[2]
TRAINERS = ROOT / "agentgym_suite" / "trainers"


def test_the_installed_trl_has_every_seam_member() -> None:
    assert trl_seam.moved_members() == [], "TRL moved these; port the trainer or pin a supported TRL"


def test_the_installed_trl_is_a_supported_one_and_pyproject_pins_the_same_range() -> None:
    assert trl.__version__ in SpecifierSet(trl_seam.SUPPORTED_TRL)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = [dep for dep in project["dependencies"] if re.match(r"trl\b", dep)]
    assert pins == [f"trl{trl_seam.SUPPORTED_TRL}"]
    assert trl_seam.SUPPORTED_TRL in (ROOT / "docs" / "training.md").read_text(encoding="utf-8")


def used_private_trl_members() -> set[str]:
    """Private names the trainer's own classes (those of ``AgentGRPOTrainer``'s MRO defined in the
    suite) define or touch (``def _x``, ``self._x``, ``super()._x``), and that functions of the trainer
    modules touch on the trainer they are given (``trainer._x``), which TRL's ``GRPOTrainer`` (or a
    base) also defines or assigns."""
    from agentgym_suite.trainers import AgentGRPOTrainer

    trl_methods = {name for name in dir(GRPOTrainer) if name.startswith("_") and not name.startswith("__")}
    trl_attributes = trl_seam._assigned_attributes(GRPOTrainer)
    own = [cls for cls in inspect.getmro(AgentGRPOTrainer) if cls.__module__.startswith("agentgym_suite.")]
    used: set[str] = set()
    for cls in own:
        used |= set(re.findall(r"(?:def |self\.|super\(\)\.)(_[a-zA-Z]\w*)", inspect.getsource(cls)))
    for path in TRAINERS.rglob("*.py"):
        used |= set(re.findall(r"\btrainer\.(_[a-zA-Z]\w*)", path.read_text(encoding="utf-8")))
    return used & (trl_methods | trl_attributes)


def test_the_seam_lists_every_private_trl_member_the_trainer_uses() -> None:
    used = used_private_trl_members()
    listed = {m.name for m in trl_seam.SEAM}
    assert used - listed == set(), "add these to trainers/trl_seam.py with why the trainer needs them"
    assert listed - used == set(), "the trainer no longer uses these; drop them from trainers/trl_seam.py"
    assert all(m.why for m in trl_seam.SEAM) and len(listed) == len(trl_seam.SEAM)


def test_the_seam_lists_every_import_from_trl_internals() -> None:
    found: set[tuple[str, str]] = set()
    for path in TRAINERS.rglob("*.py"):
        for module, names in re.findall(r"from (trl\.[\w.]+) import ([\w, ]+)", path.read_text(encoding="utf-8")):
            found |= {(module, name.strip()) for name in names.split(",")}
    assert found == {(i.module, i.name) for i in trl_seam.INTERNAL_IMPORTS}


def test_a_moved_member_is_named_with_its_reason() -> None:
    class OldTRL:  # a trainer class without the members: what a TRL that renamed them looks like
        def _prepare_inputs(self) -> None:
            self._metrics = {}

    moved = trl_seam.moved_members(OldTRL)
    assert any(line.startswith("_generate_and_score_completions (overridden method: the heart") for line in moved)
    assert any(line.startswith("_buffered_inputs (attribute:") for line in moved)
    assert not any(line.startswith(("_prepare_inputs ", "_metrics ")) for line in moved)


def test_check_names_the_moved_members_and_the_supported_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trl_seam, "moved_members", lambda: ["_step (attribute: why)"])
    trl_seam.check_trl_seam.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"lacks .*trl>=1\.16.*_step \(attribute: why\)"):
            trl_seam.check_trl_seam()
    finally:
        trl_seam.check_trl_seam.cache_clear()

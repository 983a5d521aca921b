"""The suite's method packages declare entry points in their package and are found by walking the floor."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgym_suite.core import plugins


@pytest.fixture()
def floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in methods floor ``fake_methods`` on ``sys.path``, walked instead of the suite's."""
    root = tmp_path / "fake_methods"
    (root / "good").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "good" / "__init__.py").write_text(
        "ENTRY_POINTS = {'my.group': {'thing': 'fake_methods.good.thing:THING', 'gone': 'fake_methods.good.thing:NOPE'}}\n",
        encoding="utf-8")
    (root / "good" / "thing.py").write_text("THING = 42\n", encoding="utf-8")
    for name, init in {"broken": "raise ImportError('no such backend')\n", "bad": "ENTRY_POINTS = 3\n"}.items():
        (root / name).mkdir()
        (root / name / "__init__.py").write_text(init, encoding="utf-8")
    (root / "not_a_package.py").write_text("ENTRY_POINTS = {'my.group': {'x': 'os:sep'}}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "METHODS_PACKAGE", "fake_methods")
    plugins.refresh()
    yield root
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "fake_methods" or m.startswith("fake_methods.")]:
        del sys.modules[name]
    plugins.refresh()


def test_declared_entry_points_load_and_broken_packages_are_skipped_with_a_warning(floor: Path) -> None:
    with pytest.warns(UserWarning) as caught:
        found = plugins.suite_methods("my.group")
    assert [(p.name, p.obj, p.distribution) for p in found] == [("thing", 42, "agentgym-suite (fake_methods.good)")]
    messages = " | ".join(str(w.message) for w in caught)
    assert "fake_methods.broken cannot be imported" in messages and "no such backend" in messages
    assert "fake_methods.bad.ENTRY_POINTS is skipped" in messages
    assert "'gone'" in messages and "AttributeError" in messages
    assert plugins.suite_methods("another.group") == ()


def test_the_suites_floor_declares_envace() -> None:
    credit = {p.name: p for p in plugins.suite_methods(plugins.CREDIT_GROUP)}
    assert credit["envace"].obj.name == "envace" and "agentgym_suite.methods.envace" in credit["envace"].distribution

"""The Python the project declares is one its pinned dependencies install on, and ``make`` says
so at once when the interpreter is older."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared_minimum() -> Version:
    """The lower bound of ``requires-python``."""
    bounds = [Version(s.version) for s in SpecifierSet(PROJECT["requires-python"]) if s.operator in (">=", "~=", "==")]
    assert bounds, f"requires-python {PROJECT['requires-python']!r} has no lower bound"
    return max(bounds)


def requirements() -> list[Requirement]:
    """Every dependency and extra of pyproject.toml."""
    texts = list(PROJECT["dependencies"])
    for extra in PROJECT.get("optional-dependencies", {}).values():
        texts.extend(extra)
    return [Requirement(text) for text in texts]


def test_requires_python_is_not_lower_than_any_installed_dependency_needs() -> None:
    minimum = declared_minimum()
    checked, too_low = [], []
    for requirement in requirements():
        try:
            needed = metadata(requirement.name).get("Requires-Python")
        except PackageNotFoundError:  # an extra this machine did not install (e.g. vllm)
            continue
        checked.append(requirement.name)
        if needed and minimum not in SpecifierSet(needed):
            too_low.append(f"{requirement.name} needs Python {needed}")
    assert len(checked) >= 15, f"too few dependencies installed to check: {checked}"
    assert not too_low, f"requires-python is {PROJECT['requires-python']} but " + "; ".join(too_low)


def test_the_makefile_and_the_docs_name_the_same_python() -> None:
    minimum = declared_minimum()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(rf"^MIN_PYTHON := {re.escape(str(minimum))}$", makefile, re.M)
    for doc in ("README.md", "docs/getting-started.md", "docs/index.md"):
        assert f"Python ≥ {minimum}" in (ROOT / doc).read_text(encoding="utf-8"), doc


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_stops_at_once_naming_the_python_found_and_needed(tmp_path: Path) -> None:
    ok = subprocess.run(["make", "-s", f"PYTHON={sys.executable}", "python-check"], cwd=ROOT, capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    old = shutil.which("python3.10")
    if old and subprocess.run([old, "-c", "pass"], capture_output=True).returncode == 0:
        python, found = old, "Python 3.10"
    else:  # no 3.10 here: a name that is no interpreter is refused the same way
        python, found = str(tmp_path / "python-missing"), "no interpreter"
    refused = subprocess.run(["make", "-s", f"PYTHON={python}", "demo"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode != 0
    assert f"needs Python >= {declared_minimum()}" in refused.stderr
    assert found in refused.stderr
    assert "make PYTHON=python3.11 demo" in refused.stderr

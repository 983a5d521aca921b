"""A method package (``agentgym_suite/methods/<name>/``) is found through extension points, never named.

The method floor sits above the trainer and evaluation floors (``tests/test_layers.py``), so the
layer rule already keeps lower floors from importing it; the command line and the comparisons sit
higher and could. The rules here, exactly:

* Scanned: every module of the package outside ``methods/``.
* Read: identifiers (modules imported, names, attributes, parameters...) and non-docstring string
  constants, as the concepts test reads them (``tests/test_no_names_in_generic_layers.py``).
* Names of a method package: ``agentgym_suite.methods`` followed by anything, and each method
  package's name as a whole word (``envace``, not ``envace_checklist``).
* Allowed: :data:`NAMING_ALLOWED`, each with the reason and checked still needed.

And the concepts EnvACE brought (``rehears``, ``simulator``) are caught outside its package where
the concepts test does not look: the credit plug-ins' folder (``trainers/credit/``, a method home
for the plug-ins still there, but none of them rehearses), ``comparisons/``, ``agents/``,
``serving/``, ``llm/``, ``integrations/`` and ``demo/``; only the concepts test's declared extension
points are allowed there.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_no_names_in_generic_layers import _allowed, code_texts, concept_tokens

PACKAGE = Path(__file__).resolve().parents[1] / "agentgym_suite"
METHODS = PACKAGE / "methods"
METHOD_PACKAGES = sorted(p.name for p in METHODS.iterdir() if (p / "__init__.py").is_file())

NAMING_ALLOWED: dict[str, str] = {
    "core/plugins.py": "the extension point itself: suite_methods walks the floor (METHODS_PACKAGE), naming no method",
}
"""Modules (under the package) that may name the method floor or a method package -> why."""

REHEARSAL_CONCEPT = re.compile(r"rehears|simulator", re.IGNORECASE)
BELOW_THE_METHOD = ("trainers/credit/", "comparisons/", "agents/", "serving/", "llm/", "integrations/", "demo/")
"""Folders where EnvACE's concepts are checked beyond the concepts test's layers (``envs/`` is left out:
its benchmarks have simulators of their own, ScienceWorld's engine and τ²'s user simulator)."""


def _method_names() -> re.Pattern[str]:
    words = "|".join(re.escape(name) for name in METHOD_PACKAGES)
    return re.compile(rf"agentgym_suite\.methods\b[\w.:]*|(?<![\w])(?:{words})(?![\w])")


def naming(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` for each identifier or non-docstring string of ``source`` naming a method package."""
    pattern = _method_names()
    return [(line, found) for line, text in code_texts(source) for found in pattern.findall(text)]


def _outside_the_floor() -> list[tuple[str, Path]]:
    return [(path.relative_to(PACKAGE).as_posix(), path) for path in sorted(PACKAGE.rglob("*.py"))
            if not path.is_relative_to(METHODS)]


def test_the_floor_holds_method_packages() -> None:
    assert "envace" in METHOD_PACKAGES


def test_the_rule_reads_imports_names_and_strings_but_not_prose() -> None:
    source = '''
"""Prose may say agentgym_suite.methods.envace."""
from agentgym_suite.methods.envace.credit import EnvACECredit
import agentgym_suite.methods
def f(credit="envace", envace_checklist=1):
    """So may a docstring: envace."""
    return load("agentgym_suite.methods.envace.env:RehearsalEnv")
'''
    assert sorted(name for _, name in naming(source)) == [
        "agentgym_suite.methods", "agentgym_suite.methods.envace.credit", "agentgym_suite.methods.envace.env:RehearsalEnv",
        "envace"]


def test_no_module_outside_the_floor_names_a_method_package() -> None:
    offences = [f"agentgym_suite/{relative}:{line}: {name!r}" for relative, path in _outside_the_floor()
                if relative not in NAMING_ALLOWED for line, name in naming(path.read_text(encoding="utf-8"))]
    assert not offences, (
        "a module outside agentgym_suite/methods/ names a method package; let the package plug in through an "
        "extension point instead (an entry point in its ENTRY_POINTS: core/plugins.py groups; a declaration of "
        "its credit plug-in; an EvalExtension), and ask that point from here:\n" + "\n".join(offences))


def test_naming_exemptions_are_still_needed() -> None:
    named = {relative for relative, path in _outside_the_floor() if naming(path.read_text(encoding="utf-8"))}
    assert set(NAMING_ALLOWED) <= named, f"stale NAMING_ALLOWED entries: {sorted(set(NAMING_ALLOWED) - named)}"


def test_the_rehearsal_concepts_stay_in_their_method_package() -> None:
    offences = []
    for folder in BELOW_THE_METHOD:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            relative = path.relative_to(PACKAGE).as_posix()
            offences += [f"agentgym_suite/{relative}:{line}: {token!r}"
                         for line, token in concept_tokens(path.read_text(encoding="utf-8"))
                         if REHEARSAL_CONCEPT.search(token) and not _allowed(relative, token)]
    assert not offences, ("EnvACE's concepts sit outside agentgym_suite/methods/envace/; move them there and reach "
                          "them through a declaration (e.g. CreditAssigner.run_needs):\n" + "\n".join(offences))

"""``agentgym conformance``: the fast set of two benchmarks and of two methods agrees with upstream, a
disagreeing case exits 1 and names itself, the report carries each card's and each method declaration's
upstream facts and checks, and every file of ``tests/conformance/`` is declared by one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentgym_suite.commands.conformance import selected
from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.registration import entry, env_card, suite_entries
from agentgym_suite.trainers.conformance import method_conformance

ROOT = Path(__file__).resolve().parents[1]


def _conformance(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "agentgym_suite.cli", "conformance", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_fast_set_agrees_and_reports_each_cards_upstream_and_checks() -> None:
    done = _conformance("SearchR1-v0", "FinMCP-v0", "TextWorld-v0", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    reports = {r["env_id"]: r for r in json.loads(done.stdout)["envs"]}
    for env_id in ("SearchR1-v0", "FinMCP-v0"):
        card = env_card(entry(env_id))
        report = reports[env_id]
        assert report["passed"] > 0 and report["failed"] == 0 and report["cases"] == report["passed"], report
        assert report["checks"] == list(card.conformance) and report["upstream"] == card.upstream
        assert report["version"] == card.version and list(report["files"]) == list(card.conformance_tests)
    assert reports["TextWorld-v0"]["cases"] == 0 and reports["TextWorld-v0"]["agreement"].startswith("not checked")


def test_a_disagreeing_case_exits_1_and_is_named(tmp_path: Path) -> None:
    cases = tmp_path / "tests" / "conformance"
    cases.mkdir(parents=True)
    (cases / "test_searchqa.py").write_text(
        "def test_agrees():\n    assert 1 == 1\n\n\ndef test_disagrees():\n    assert 'ours' == 'upstream'\n")
    for path in env_card(entry("SearchR1-v0")).conformance_tests:  # the card's other files, agreeing
        if not (tmp_path / path).exists():
            (tmp_path / path).write_text("def test_agrees():\n    assert 2 == 2\n")
    done = _conformance("SearchR1-v0", "--cases", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    others = len(env_card(entry("SearchR1-v0")).conformance_tests) - 1
    assert f"SearchR1-v0: DISAGREES: 1 of {2 + others} tests" in done.stdout
    assert "test_disagrees" in done.stdout and "'ours' == 'upstream'" in done.stdout


def test_full_adds_the_slow_cases_and_their_disagreements(tmp_path: Path) -> None:
    """The fast set leaves out cases marked slow; ``--full`` runs them, so a slow disagreement exits 1 only there."""
    cases = tmp_path / "tests" / "conformance"
    cases.mkdir(parents=True)
    for path in env_card(entry("SearchR1-v0")).conformance_tests:
        (tmp_path / path).write_text("def test_agrees():\n    assert 2 == 2\n")
    (cases / "test_searchqa.py").write_text(
        "import pytest\n\n\ndef test_agrees():\n    assert 1 == 1\n\n\n"
        "@pytest.mark.slow\ndef test_every_entry():\n    assert 'ours' == 'upstream'\n")
    files = len(env_card(entry("SearchR1-v0")).conformance_tests)
    fast = _conformance("SearchR1-v0", "--cases", str(tmp_path), cwd=tmp_path)
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert f"SearchR1-v0: agrees: {files} of {files} tests" in fast.stdout and "--full adds the slow cases" in fast.stdout
    full = _conformance("SearchR1-v0", "--full", "--cases", str(tmp_path), cwd=tmp_path)
    assert full.returncode == 1, full.stdout + full.stderr
    assert f"SearchR1-v0: DISAGREES: 1 of {files + 1} tests" in full.stdout and "test_every_entry" in full.stdout


def test_unknown_ids_and_missing_cases_are_usage_errors(tmp_path: Path) -> None:
    done = _conformance("SearchR2-v0")
    assert done.returncode == 2 and "Did you mean 'SearchR1-v0'" in done.stderr
    done = _conformance("SearchR1-v0", "--cases", str(tmp_path))
    assert done.returncode == 2 and "no tests/conformance/" in done.stderr


def test_method_cases_run_and_report_their_declarations() -> None:
    declared = {d.id: d for d in method_conformance()}
    done = _conformance("credit:skillrise", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["envs"] == []
    methods = {m["id"]: m for m in report["methods"]}
    assert list(methods) == ["credit:skillrise"]
    for method_id, method in methods.items():
        conformance = declared[method_id].conformance
        assert method["passed"] > 0 and method["failed"] == 0 and method["cases"] == method["passed"], method
        assert method["checks"] == list(conformance.checks) and method["upstream"] == conformance.upstream
        assert method["version"] == conformance.version and list(method["files"]) == list(conformance.tests)
        assert method["agreement"] == f"agrees: {method['cases']} of {method['cases']} tests"
    assert methods["credit:skillrise"]["declared_by"].endswith(":SkillRiseCredit")


def test_a_disagreeing_method_case_exits_1_and_is_named(tmp_path: Path) -> None:
    cases = tmp_path / "tests" / "conformance"
    cases.mkdir(parents=True)
    (cases / "test_skillrise.py").write_text("def test_advantages():\n    assert 3 == 4\n")
    done = _conformance("credit:skillrise", "--cases", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "credit:skillrise (SkillRise: trials, Solve/Curate parsing, advantages, group order): DISAGREES: 1 of 1" \
        in done.stdout
    assert "upstream: github.com/lyq1119/" in done.stdout and "assert 3 == 4" in done.stdout


def test_every_conformance_file_is_declared_by_an_env_card_or_a_method() -> None:
    declared = {path for item in suite_entries() if (card := env_card(item)) for path in card.conformance_tests}
    declared |= {path for d in method_conformance() for path in d.conformance.tests}
    files = {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "conformance").glob("test_*.py")}
    assert files - declared == set(), "declare these in an env card or a method's `conformance`"
    assert declared <= files


def test_the_catalogue_lists_every_method_declaration() -> None:
    from agentgym_suite.commands.list_envs import methods_markdown

    table = methods_markdown()
    for declared in method_conformance():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{declared.id}` |"))
        assert declared.conformance.checks[0] in row and declared.conformance.tests[0] in row


def test_methods_are_found_by_walking_the_registries(monkeypatch) -> None:
    from agentgym_suite.trainers.credit import registry
    from agentgym_suite.trainers.credit.grpo import GRPOCredit

    class CheckedCredit(GRPOCredit):
        name = "checked_credit"
        conformance = MethodConformance(name="checked_credit", subject="a plug-in of another distribution",
                                        upstream="example.org/checked", version="1.0", checks=("its advantages",),
                                        tests=("tests/conformance/test_checked.py",))

    monkeypatch.setattr(registry, "plugin_credit_assigners", lambda: {"checked_credit": CheckedCredit})
    found = {d.id: d for d in method_conformance()}
    assert found["credit:checked_credit"].conformance is CheckedCredit.conformance
    assert {"credit:skillrise", "trainer:verl_schedule", "trainer:teacher_skills"} <= set(found)
    envs, methods = selected(["SearchR1-v0", "credit:checked_credit"])
    assert [e.id for e in envs] == ["SearchR1-v0"] and [m.id for m in methods] == ["credit:checked_credit"]
    with pytest.raises(KeyError, match="declared: credit:"):
        selected(["credit:nope"])
    assert [d.id for d in method_conformance(("trainer",))] == ["trainer:verl_schedule", "trainer:teacher_skills"]
    with pytest.raises(ValueError, match="at least one check"):
        MethodConformance(name="x", subject="x", upstream="x", version="x", checks=(), tests=("a.py",))


def test_the_source_distribution_carries_every_declared_case(tmp_path: Path) -> None:
    """A wheel carries no tests; the sdist of the same version does, for ``--cases`` (MANIFEST.in)."""
    import shutil
    import tarfile

    tracked = subprocess.run(["git", "ls-files", "-z", "pyproject.toml", "README.md", "MANIFEST.in", "agentgym_suite",
                              "tests/conformance", "tests/conftest.py"], cwd=ROOT, capture_output=True, check=True)
    source = tmp_path / "src"
    for name in filter(None, tracked.stdout.decode("utf-8").split("\0")):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_sdist(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", build, str(tmp_path / "dist")], cwd=source, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with tarfile.open(tmp_path / "dist" / done.stdout.strip().splitlines()[-1]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    declared = {path for item in suite_entries() if (card := env_card(item)) for path in card.conformance_tests}
    declared |= {path for d in method_conformance() for path in d.conformance.tests}
    assert declared <= names and "tests/conftest.py" in names
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "conformance").rglob("*.json")} <= names


def test_a_wheel_install_is_told_how_to_fetch_the_cases(monkeypatch) -> None:
    from agentgym_suite.commands import conformance

    monkeypatch.setattr(conformance, "default_cases_root", lambda: None)
    monkeypatch.delenv(conformance.CASES_ENV_VAR, raising=False)
    with pytest.raises(FileNotFoundError, match="--no-binary agentgym-suite") as raised:
        conformance.cases_root(None)
    assert "agentgym conformance --cases agentgym_suite-" in str(raised.value)

"""``agentgym conformance``: the fast set of two benchmarks agrees with upstream, a disagreeing case
exits 1 and names itself, and the report carries each card's upstream facts and checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentgym_suite.registration import entry, env_card

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
    done = _conformance("SearchR1-v0", "--cases", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SearchR1-v0: DISAGREES: 1 of 2 tests" in done.stdout
    assert "test_disagrees" in done.stdout and "'ours' == 'upstream'" in done.stdout


def test_unknown_ids_and_missing_cases_are_usage_errors(tmp_path: Path) -> None:
    done = _conformance("SearchR2-v0")
    assert done.returncode == 2 and "Did you mean 'SearchR1-v0'" in done.stderr
    done = _conformance("SearchR1-v0", "--cases", str(tmp_path))
    assert done.returncode == 2 and "no tests/conformance/" in done.stderr

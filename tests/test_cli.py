"""The ``agentgym`` command: ``list`` and ``data``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentgym_suite.cli import main
from agentgym_suite.registration import all_entries


def test_list_names_every_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--plain"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    ids = [line.split("\t")[0] for line in lines]
    assert ids == [e.id for e in all_entries()]
    statuses = dict(line.split("\t")[:2] for line in lines)
    assert statuses["TextWorld-v0"] == "ready"


def test_console_script_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "agentgym_suite.cli", "list", "--plain"],
                         capture_output=True, text=True, check=True).stdout
    assert "ALFWorld-v0" in out

"""examples/integrations_bridges.py (the runnable example of docs/integrations.md) runs and each bridge pays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("verifiers")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_documented_example_runs_every_bridge() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "integrations_bridges.py")], capture_output=True,
                          text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "1. MCP-v0 oracle rewards: [1.0, 1.0]" in lines
    assert any(line.startswith("2. agentgym serve --mcp, score(): {'reward': 1.0") for line in lines)
    assert "3. Verifiers-v0 reward: 1.0" in lines
    assert "4. verifiers evaluate on SyntheticTools-v0: [1.0, 1.0, 1.0]" in lines
    assert "not carried over" in done.stderr  # the served run says what it leaves out

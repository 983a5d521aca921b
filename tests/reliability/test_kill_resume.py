"""``agentgym eval`` killed with SIGKILL at random points: a re-run resumes, nothing lost or doubled.

Every kill lands after a random number of new trajectory lines plus a random delay, so some
kills hit between episodes and some mid-episode or mid-write. The final directory must hold
exactly the episodes of an uninterrupted run, with identical records (deterministic agents;
only the timing fields differ).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TIMING_FIELDS = ("wall_s", "policy_s")


def _command(out: Path, agent: str, env_id: str, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "agentgym_suite.cli", "eval", env_id, "--agent", agent, "--out", str(out),
            "--no-progress", "--json", *extra]


def _lines(out: Path) -> int:
    try:
        return (out / "trajectories.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _records(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    keyed = {f"{r['task_id']}#{r['attempt']}": {k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in records}
    assert len(keyed) == len(records), "a resumed run duplicated an episode"
    return keyed


def _killed_runs(command: list[str], out: Path, rng: random.Random, kills: int, env: dict[str, str]) -> int:
    """Start the run ``kills`` times, SIGKILL it at a random point; return how many kills landed."""
    landed = 0
    for _ in range(kills):
        target = _lines(out) + rng.randint(1, 12)
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        while proc.poll() is None and _lines(out) < target:
            time.sleep(0.001)
        time.sleep(rng.random() * 0.02)
        if proc.poll() is None:
            proc.kill()
            landed += 1
        proc.communicate()
    return landed


@pytest.mark.parametrize(
    "agent, env_id, extra",
    [
        ("oracle", "SyntheticTools-v0", ["--episodes", "60", "--k", "2"]),
        ("random", "SyntheticTools-v0", ["--episodes", "80", "--k", "3", "--max-turns", "4"]),
        pytest.param("oracle", "TextWorld-v0", ["--episodes", "4", "--k", "3", "--env-kwargs",
                                                '{"challenge": "tw-coin_collector", "n_games": 4}'],
                     marks=pytest.mark.slow),
    ],
)
def test_sigkilled_eval_resumes_with_nothing_lost_or_duplicated(
    agent: str, env_id: str, extra: list[str], tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    reference, resumed = tmp_path / "reference", tmp_path / "resumed"
    done = subprocess.run(_command(reference, agent, env_id, extra), capture_output=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    expected = _records(reference)

    rng = random.Random(f"{agent}-{env_id}")
    landed = _killed_runs(_command(resumed, agent, env_id, extra), resumed, rng, kills=4, env=env)
    assert landed >= 1, "no kill hit a running evaluation; the test did not exercise a resume"
    final = subprocess.run(_command(resumed, agent, env_id, extra), capture_output=True, env=env, timeout=600)
    assert final.returncode == 0, final.stderr.decode()[-2000:]

    got = _records(resumed)
    assert sorted(got) == sorted(expected)
    assert got == expected
    summary = json.loads(final.stdout)
    assert summary["complete"] is True and summary["episodes"] == len(expected)

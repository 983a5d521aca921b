"""Wilson score intervals and success rates read from saved episodes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agentgym_suite.demo.stats import episodes_success, intervals_overlap, wilson_interval


def test_wilson_interval_matches_its_closed_forms() -> None:
    low, high = wilson_interval(0, 48)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(1.959963984540054**2 / (48 + 1.959963984540054**2))
    low, high = wilson_interval(48, 48)
    assert high == pytest.approx(1.0) and low == pytest.approx(48 / (48 + 1.959963984540054**2))
    low, high = wilson_interval(24, 48)  # symmetric about 1/2
    assert low + high == pytest.approx(1.0) and 0.36 < low < 0.37
    # wider than nothing, narrower with more episodes
    assert (lambda a, b: a[1] - a[0] > b[1] - b[0])(wilson_interval(5, 20), wilson_interval(50, 200))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 4)


def test_episodes_success_counts_the_last_record_of_each_episode(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    lines = [{"key": "a#0", "won": False}, {"key": "a#0", "won": True}, {"key": "b#0", "won": False},
             {"task_id": "c", "attempt": 0, "won": True}]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = episodes_success(path)
    assert (result["episodes"], result["won"]) == (3, 2)
    assert result["success_rate"] == pytest.approx(2 / 3)
    assert (result["ci_low"], result["ci_high"]) == wilson_interval(2, 3)
    assert math.isclose(result["ci_low"] + result["ci_high"], 2 * (2 / 3 + 1.96**2 / 6) / (1 + 1.96**2 / 3), rel_tol=1e-3)


def test_overlap() -> None:
    assert not intervals_overlap({"ci_low": 0.0, "ci_high": 0.1}, {"ci_low": 0.2, "ci_high": 0.5})
    assert intervals_overlap({"ci_low": 0.0, "ci_high": 0.3}, {"ci_low": 0.2, "ci_high": 0.5})

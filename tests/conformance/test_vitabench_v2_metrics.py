"""VitaBench 2.0 metrics equal upstream's ``compute_metrics`` on the same result records.

The expected numbers in ``vitabench_v2/metrics.json`` were produced by the official code
(``regenerate_metrics.py`` names the repository and commit); the cases cover every trial written,
a crashed trial (counts 0), a user never scored, a subtask not evaluated and a single trial.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym_suite.envs.vitabench.metrics import personalization_metrics

CASES = json.loads((Path(__file__).parent / "vitabench_v2" / "metrics.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_metrics_equal_upstream(name: str) -> None:
    case = CASES[name]
    ours = personalization_metrics(case["rows"], case["num_trials"])
    expected = case["upstream"]
    assert set(ours) == set(expected)
    for key, value in expected.items():
        if isinstance(value, dict) and key != "skill_split_metrics":
            assert ours[key] == pytest.approx(value, abs=1e-12), key
        elif key == "skill_split_metrics":
            assert set(ours[key]) == set(value)
            for group, numbers in value.items():
                assert ours[key][group] == pytest.approx(numbers, abs=1e-12), group
        else:
            assert ours[key] == value, key


def test_crashed_trial_counts_zero_when_trials_are_inferred() -> None:
    """With the trial count taken from the run, a unit missing one trial still has that trial as 0."""
    case = CASES["one_trial_crashed"]
    rows = [dict(r) for r in case["rows"]]
    ours = personalization_metrics(rows)
    assert ours["num_trials"] == 3
    assert ours["subtask_average_at_n"]["1"] == pytest.approx(case["upstream"]["subtask_average_at_n"]["1"])

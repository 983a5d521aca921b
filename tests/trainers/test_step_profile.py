"""The per-step time profile: every training step's wall time split into phases, written to
step_times.jsonl, logged as time/<phase>_s and printed."""

from __future__ import annotations

import json
import time

import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.step_profile import PHASES, StepProfile, format_step_times, read_step_times
from trainers.fake_env import make_letter_env


def test_profile_adds_phases_and_puts_the_rest_in_other() -> None:
    profile = StepProfile()
    profile.add("optimizer", 5.0)  # outside a step: ignored
    profile.begin()
    with profile.timed("forward_backward"):
        time.sleep(0.02)
    profile.add("optimizer", 0.001)
    time.sleep(0.02)  # in no phase: counted as other
    record = profile.finish(3)
    assert record is not None and record["step"] == 3
    assert record["optimizer"] == pytest.approx(0.001)
    assert record["forward_backward"] >= 0.02
    assert record["other"] >= 0.02 - 0.001
    assert sum(record[p] for p in PHASES) == pytest.approx(record["wall_s"])
    assert profile.finish(4) is None
    with pytest.raises(KeyError, match="unknown phase"):
        profile.add("backward", 1.0)
    assert format_step_times(record).startswith("step 3 time ")


def test_trainer_writes_logs_and_prints_each_steps_profile(make_config, tmp_path, capsys) -> None:
    args = make_config(max_steps=2, credit="sdar")
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    trainer.train()
    records = read_step_times(tmp_path / "run" / "step_times.jsonl")
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert set(PHASES) <= set(record)
        assert record["rollout_generation"] > 0 and record["forward_backward"] > 0
        assert record["logprob_passes"] > 0  # sdar's teacher log-probs
        assert record["optimizer"] > 0 and record["logging"] > 0
        assert sum(record[p] for p in PHASES) == pytest.approx(record["wall_s"], rel=1e-6)
        assert sum(record[p] for p in PHASES if p != "other") <= record["wall_s"] + 1e-9
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert [h["time/forward_backward_s"] for h in logged] == [r["forward_backward"] for r in records]
    printed = capsys.readouterr().out
    assert "step 1 time " in printed and "step 2 time " in printed and "rollout_generation" in printed
    assert json.loads((tmp_path / "run" / "step_times.jsonl").read_text().splitlines()[0])["step"] == 1

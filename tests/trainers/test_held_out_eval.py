"""Evaluation during training: held-out tasks played by the rollout engine, their success logged
into the run's log, the training batch untouched."""

from __future__ import annotations

import json
import math

import pytest

from agentgym_suite.commands.train import parse_config
from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.rollout.summary import EpisodeOutcome
from agentgym_suite.trainers.held_out_eval import held_out_curve, process_share, summarize
from agentgym_suite.trainers.trajectory_log import read_step
from trainers.conftest import tiny_config
from trainers.fake_env import make_letter_env

HELD_OUT = ["t5", "t6"]


def test_eval_every_step_with_reused_batches_logs_held_out_success(make_config, tmp_path):
    # num_iterations 2: the batch generated at step 1 is trained on again at step 2, after an evaluation;
    # sdar keeps its credit batch for the auxiliary loss, which evaluation must not overwrite
    args = make_config(max_steps=3, num_iterations=2, credit="sdar", eval_strategy="steps", eval_steps=1,
                       task_ids=["t0", "t1", "t2", "t3"], eval_task_ids=HELD_OUT, per_device_eval_batch_size=2)
    trainer = AgentGRPOTrainer(args=args, env_factory=make_letter_env)
    stored = []
    evaluate = trainer.evaluate
    trainer.evaluate = lambda *a, **k: (stored.append(trainer._credit_batch), evaluate(*a, **k),
                                        stored.append(trainer._credit_batch))[1]
    trainer.train()
    assert trainer.state.global_step == 3
    curve = held_out_curve(trainer.state.log_history)
    assert [step for step, _ in curve] == [1, 2, 3]
    assert all(0.0 <= rate <= 1.0 for _, rate in curve)
    record = next(h for h in trainer.state.log_history if "eval_success_rate" in h)
    assert record["eval_episodes"] == len(HELD_OUT) and math.isfinite(record["eval_return_mean"])
    assert all(before is after for before, after in zip(stored[::2], stored[1::2])), "evaluation replaced the batch"
    assert all(math.isfinite(h["loss"]) for h in trainer.state.log_history if "loss" in h)
    played = read_step(tmp_path / "run" / "eval_trajectories" / "step_000001.jsonl")
    assert sorted(e["task_id"] for e in played) == HELD_OUT
    trained = {e["task_id"] for f in (tmp_path / "run" / "trajectories").glob("*.jsonl") for e in read_step(f)}
    assert not trained & set(HELD_OUT)


def test_evaluating_leaves_the_training_rollouts_as_they_were(tmp_path):
    def trajectories(**extra):
        args = tiny_config(str(tmp_path / str(bool(extra))), max_steps=2, **extra)
        AgentGRPOTrainer(args=args, env_factory=make_letter_env).train()
        lines = read_step(tmp_path / str(bool(extra)) / "trajectories" / "step_000002.jsonl")
        return [[t["action"] for t in line["turns"]] for line in lines]

    assert trajectories() == trajectories(eval_strategy="steps", eval_steps=1, eval_task_ids=HELD_OUT)


def test_evaluation_needs_held_out_tasks(make_config):
    with pytest.raises(ValueError, match="eval_env_kwargs"):
        AgentGRPOTrainer(args=make_config(eval_strategy="steps", eval_steps=1), env_factory=make_letter_env)


def test_the_train_command_takes_a_held_out_split():
    cfg = parse_config("configs/smoke_cpu.yaml", ["--eval_strategy", "steps", "--eval_steps", "2",
                                                  "--eval_env_kwargs", json.dumps({"split": "valid"})])
    assert (cfg.eval_strategy, cfg.eval_steps, cfg.eval_env_kwargs) == ("steps", 2, {"split": "valid"})
    assert cfg.eval_temperature == pytest.approx(0.4) and cfg.num_generations_eval == 1


def test_every_process_plays_the_same_number_of_rollouts():
    from datasets import Dataset

    data = Dataset.from_dict({"task_id": [f"t{i}" for i in range(5)], "env_seed": list(range(5))})
    shares = [process_share(data, 1, run_seed=0, rank=r, world=2, per_call=2, step=0) for r in range(2)]
    assert [len(s) for s in shares] == [2, 2]
    assert sorted(spec.task_id for s in shares for part in s for spec in part) == [f"t{i}" for i in range(5)]
    won = EpisodeOutcome(won=True, score=1.0, episode_return=2.0, turns=3, failed=False, broken=False, scorable=True)
    lost = EpisodeOutcome(won=False, score=0.0, episode_return=0.0, turns=5, failed=True, broken=False, scorable=True)
    crashed = EpisodeOutcome(won=False, score=0.0, episode_return=0.0, turns=1, failed=True, broken=True, scorable=True)
    metrics = summarize([won, lost, crashed])
    # a crash is left out of the rates, as in agentgym eval's summary
    assert metrics["eval_success_rate"] == 0.5 and metrics["eval_turns_mean"] == 4.0
    assert metrics["eval_crashed"] == 1.0 and metrics["eval_error_rate"] == pytest.approx(2 / 3)
    assert "eval_success_rate" not in summarize([crashed])

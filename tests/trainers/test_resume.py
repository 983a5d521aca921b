"""A killed run resumes from its last checkpoint at the same step with the same data order."""

from __future__ import annotations

import pytest
from transformers import TrainerCallback

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.trajectory_log import read_step
from trainers.fake_env import make_letter_env


class Killed(RuntimeError):
    """Stands in for the process being killed."""


class KillAfterSave(TrainerCallback):
    """Raise right after the checkpoint of ``step`` is written."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise Killed(f"killed after saving step {self.step}")


def _tasks_per_step(trajectory_dir) -> dict[int, list[str]]:
    out = {}
    for path in sorted(trajectory_dir.glob("step_*.jsonl")):
        lines = read_step(path)
        out[lines[0]["step"]] = [line["task_id"] for line in lines]
    return out


def test_resume_after_kill_keeps_step_and_data_order(make_config, tmp_path):
    config = make_config(max_steps=3, save_strategy="steps", save_steps=1, num_tasks=6)
    trainer = AgentGRPOTrainer(args=config, env_factory=make_letter_env, callbacks=[KillAfterSave(1)])
    expected = [[str(x["task_id"]) for x in batch] for batch in trainer.get_train_dataloader()]
    with pytest.raises(Killed):
        trainer.train()
    run = tmp_path / "run"
    assert (run / "checkpoint-1").is_dir()
    first = _tasks_per_step(run / "trajectories")
    assert list(first) == [1]

    resumed = AgentGRPOTrainer(args=make_config(max_steps=3, save_strategy="steps", save_steps=1, num_tasks=6),
                               env_factory=make_letter_env)
    resumed.train(resume_from_checkpoint=True)
    assert resumed.state.global_step == 3
    steps = _tasks_per_step(run / "trajectories")
    assert sorted(steps) == [1, 2, 3]
    assert [steps[s] for s in (1, 2, 3)] == expected[:3]
    assert steps[1] == first[1]

"""A run with asynchronous rollouts stopped at a checkpoint mid-queue and resumed trains every
dispatched task exactly once: 0 lost, 0 replayed."""

from __future__ import annotations

import json

import torch
from transformers import TrainerCallback

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.async_rollouts import STATE_FILE
from agentgym_suite.trainers.async_rollouts.groups import dispatch_index
from trainers.conftest import tiny_config
from trainers.fake_env import make_letter_env


def _config(output_dir, **overrides):
    values = dict(async_rollouts=True, max_staleness=2, max_steps=4, save_strategy="steps", save_steps=2,
                  async_rollout_threads=2, print_step_times=False)
    values.update(overrides)
    return tiny_config(str(output_dir), **values)


def _trained_groups(output_dir) -> list[int]:
    """The dispatch indices of the groups each step trained on, in step order (trajectory files)."""
    indices = []
    for path in sorted((output_dir / "trajectories").glob("step_*.jsonl")):
        groups = dict.fromkeys(json.loads(line)["group"] for line in path.read_text().splitlines())
        indices += [dispatch_index(group) for group in groups]
    return indices


class _StopAfter(TrainerCallback):
    """Ends training after ``step`` (its checkpoint is still written): a run of 4 steps killed there,
    with groups for steps 3 and 4 queued or in flight (a run whose max_steps were 2 would start none)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            control.should_training_stop = True
        return control


def test_resume_mid_queue_loses_and_replays_no_task(tmp_path):
    first = AgentGRPOTrainer(args=_config(tmp_path / "a"), env_factory=make_letter_env, callbacks=[_StopAfter(2)])
    first.train()
    checkpoint = tmp_path / "a" / "checkpoint-2"
    saved = torch.load(checkpoint / STATE_FILE, weights_only=False)
    assert saved["version"] == 2
    queued = [group.index for group in saved["queue"]]
    unfinished = saved["cursor"]["redo"]
    assert queued or unfinished, "the checkpoint was taken with nothing queued or in flight; the test proves nothing"
    trained_before = _trained_groups(tmp_path / "a")
    assert trained_before == saved["trained"]

    resumed = AgentGRPOTrainer(args=_config(tmp_path / "b"), env_factory=make_letter_env)
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert resumed.state.global_step == 4
    trained_after = _trained_groups(tmp_path / "b")
    assert len(trained_after) == 4  # steps 3 and 4, 2 groups each

    everything = trained_before + trained_after
    assert len(everything) == len(set(everything)), f"a task was trained twice: {everything}"  # 0 replayed
    assert trained_after[:len(queued)] == queued[:len(trained_after)]  # the saved queue is trained first, in order
    controller = resumed._async.controller
    state = controller.state_dict()
    left = [g.index for g in state["queue"]] + state["cursor"]["redo"]
    accounted = sorted(everything + controller.dropped + left)
    assert accounted == list(range(state["cursor"]["next_index"])), accounted  # 0 lost: every dispatch accounted for
    assert set(unfinished) <= set(everything + controller.dropped + left)

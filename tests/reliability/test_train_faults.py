"""A training step whose backend errors or returns garbage for some prompts, and whose env raises
inside ``step`` for one episode.

The affected episodes are written to the step's trajectory file with the reason in ``error``;
they give no training rows (masked out entirely — no gradient, not even for the turns before the
failure, and no place in their group's baseline); the step goes on, the loss is finite and the
parameters move on the healthy episodes. A failed or empty generation is never stepped into the
env as an action.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import pytest
import torch

from agentgym_suite.llm import transformers_backend
from agentgym_suite.llm.base import Sample, SamplingParams
from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer
from agentgym_suite.trainers.rows import Row
from agentgym_suite.trainers.trajectory_log import read_step
from trainers.fake_env import TASKS, LetterEnv

LETTER = {task: text[-1] for task, text in TASKS.items()}  # t0 -> a, t1 -> e, ...
SECOND_TURN = "This is step 2."
"""Text the second prompt of an episode carries (the ``single`` prompt format)."""


class CrashingLetterEnv(LetterEnv):
    """LetterEnv whose ``step`` raises on the second turn of task ``t5``, once per test."""

    def __init__(self, crashes: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.crashes = crashes

    def step(self, action: Any) -> Any:
        if self.task_id == "t5" and self.turn >= 1 and not self.crashes:
            self.crashes.append(self.task_id)
            raise RuntimeError("the simulator lost its state")
        return super().step(action)


class FaultyBackend(transformers_backend.TransformersBackend):
    """The policy's backend, broken for chosen tasks (found by their letter in the prompt):

    * t1: the whole call raises while a t1 prompt is in it;
    * t2: an error sample on the second turn (after a real first turn);
    * t3: once, a sample with no completion tokens (garbage that looks successful);
    * t4: once, a string where a Sample belongs (malformed output).
    """

    used: set[str] = set()

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        tasks = [self._task(ids) for ids in prompt_ids]
        if any(task == "t1" for task, _ in tasks):
            raise RuntimeError("the inference server dropped the connection")
        rows: list[Any] = super().generate_from_ids(prompt_ids, params)
        for i, (task, second) in enumerate(tasks):
            if task == "t2" and second:
                rows[i] = [Sample(text="", finish_reason="error", has_token_ids=False,
                                  error="HTTP 503 from the inference server")]
            elif task in ("t3", "t4") and not second and task not in FaultyBackend.used:
                FaultyBackend.used.add(task)
                rows[i] = [Sample(text="", prompt_ids=list(prompt_ids[i]))] if task == "t3" else ["<garbage>"]
        return rows

    def _task(self, ids: Sequence[int]) -> tuple[str | None, bool]:
        text = self.decode(list(ids), skip_special_tokens=False)
        found = [task for task, letter in LETTER.items() if f"letter {letter}." in text]
        return (found[0] if found else None), SECOND_TURN in text


EXPECTED = {  # task -> (episodes failed out of 2, failure stage, text the error must start with)
    "t1": (2, "generate", "RuntimeError: the inference server dropped the connection"),
    "t2": (2, "generate", "HTTP 503 from the inference server"),
    "t3": (1, "generate", "malformed backend output: no completion tokens"),
    "t4": (1, "generate", "malformed backend output: got str instead of a Sample"),
    "t5": (1, "step", "RuntimeError: the simulator lost its state"),
}


@pytest.fixture
def trainer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentGRPOTrainer:
    FaultyBackend.used = set()
    monkeypatch.setattr(transformers_backend, "TransformersBackend", FaultyBackend)
    crashes: list[str] = []
    config = AgentGRPOConfig(
        output_dir=str(tmp_path / "run"), model_name_or_path="tiny", max_steps=1, num_generations=2,
        per_device_train_batch_size=2 * len(TASKS), max_completion_length=6, max_turns=2, bf16=False,
        gradient_checkpointing=False, report_to="none", logging_steps=1, action_format=None, learning_rate=1e-2,
        save_strategy="no", use_cpu=True, seed=7, disable_tqdm=True,
    )
    return AgentGRPOTrainer(args=config, env_factory=lambda: CrashingLetterEnv(crashes))


def test_faulty_episodes_are_recorded_and_give_no_gradient(trainer: AgentGRPOTrainer, tmp_path: Path) -> None:
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert trainer.state.global_step == 1

    episodes = read_step(tmp_path / "run" / "trajectories" / "step_000001.jsonl")
    assert len(episodes) == 2 * len(TASKS)
    failed = [e for e in episodes if e["error"] is not None]
    assert Counter(e["task_id"] for e in failed) == Counter({t: n for t, (n, _, _) in EXPECTED.items()})
    for episode in failed:
        _, stage, text = EXPECTED[episode["task_id"]]
        assert episode["error_stage"] == stage and episode["error"].startswith(text), episode
    by_error = {e["task_id"]: e for e in failed}
    assert by_error["t3"]["turns"] == [] and by_error["t4"]["turns"] == []  # garbage was never stepped
    assert len(by_error["t2"]["turns"]) == 1 and by_error["t2"]["turns"][0]["completion_tokens"] > 0
    assert len(by_error["t5"]["turns"]) == 2  # the action whose step raised is recorded, not trained
    # turn 1 was retried prompt by prompt (t1 broke the batch): each copy of a prompt drew its own sample
    firsts = [e["turns"][0]["action"] for e in episodes if e["task_id"] in ("t0", "t6")]
    assert len(set(firsts)) == len(firsts) == 4, firsts

    # masked out: the rows of the step are exactly those of the healthy episodes
    healthy = {e["traj"] for e in episodes if e["error"] is None}
    batch = trainer._credit_batch
    assert batch is not None
    trained = {t for t in batch.traj_ids if not str(t).startswith("pad:")}
    assert trained == healthy
    assert not trained & {e["traj"] for e in failed}

    loss = trainer.state.log_history[0]["loss"]
    assert math.isfinite(float(loss)), trainer.state.log_history
    moved = [n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())]
    assert moved, "no parameter changed: the healthy episodes gave no gradient"


def test_a_row_without_completion_tokens_is_masked(trainer: AgentGRPOTrainer) -> None:
    row = Row(prompt_ids=[1, 2], completion_ids=[], env_mask=[], logprobs=[], group="g", traj="x", turn_idx=0,
              role="agent", ret=1.0, invalid=False, step_reward=0.0, anchor="", position=0, episode=None)  # type: ignore[arg-type]
    assert trainer._keep_row(row) == 0
    assert trainer._keep_row(Row(**{**row.__dict__, "completion_ids": [5], "env_mask": [1], "logprobs": [-1.0]})) == 1

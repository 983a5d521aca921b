"""Batched evaluation: episodes in lockstep with one generation call per turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym_suite.evaluation.runner import evaluate

from .fake_env import register_fake_env

FAKE_ID = register_fake_env()


def _strip(records: list) -> list:
    return sorted((r.task_id, r.attempt, [(t.completion_text, t.observation, t.reward, t.action_valid) for t in r.turns],
                   r.won)
                  for r in records)


def test_batched_greedy_eval_equals_one_by_one(tmp_path: Path) -> None:
    options = {"max_new_tokens": 6, "temperature": 0.0}
    single = evaluate(FAKE_ID, "tiny", out_dir=tmp_path / "one", episodes=5, seed=3, max_turns=3, progress=False,
                      agent_options=options)
    batched = evaluate(FAKE_ID, "tiny", out_dir=tmp_path / "batch", episodes=5, seed=3, max_turns=3, progress=False,
                       agent_options=options, batch_size=4)
    assert batched.summary["episodes"] == 5 and batched.summary["errors"] == 0
    assert _strip(batched.records) == _strip(single.records)
    assert all(t.prompt_text and t.completion_tokens for r in batched.records for t in r.turns)


def test_sampled_eval_is_the_same_for_any_batch_size(tmp_path: Path) -> None:
    # each episode samples from its own seed (per-row generators in the transformers backend), so
    # which episodes share a batch does not change what any of them does
    options = {"max_new_tokens": 6, "temperature": 1.0}
    runs = [evaluate(FAKE_ID, "tiny", out_dir=tmp_path / str(size), episodes=3, k=2, seed=3, max_turns=2,
                     progress=False, agent_options=options, batch_size=size) for size in (1, 6)]
    assert _strip(runs[0].records) == _strip(runs[1].records)
    actions = [tuple(t.completion_text for t in r.turns) for r in runs[0].records]
    assert len(set(actions)) > 1  # sampled, not one repeated answer


def test_batched_eval_resumes_and_isolates_a_crashing_env(tmp_path: Path) -> None:
    kwargs = {"crash_task": "task-1"}
    options = {"max_new_tokens": 4, "temperature": 0.0}
    first = evaluate(FAKE_ID, "tiny", out_dir=tmp_path, episodes=6, seed=0, max_turns=3, progress=False,
                     env_kwargs=kwargs, agent_options=options, batch_size=3)
    crashed = [r for r in first.records if r.error]
    assert {r.task_id for r in crashed} <= {"task-1"}
    assert first.summary["episodes"] == 6
    again = evaluate(FAKE_ID, "tiny", out_dir=tmp_path, episodes=6, seed=0, max_turns=3, progress=False,
                     env_kwargs=kwargs, agent_options=options, batch_size=3)
    assert again.ran == 0 and len(again.records) == 6


def test_batch_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        evaluate(FAKE_ID, "oracle", out_dir=tmp_path, episodes=1, batch_size=0, progress=False)

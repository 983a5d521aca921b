"""A generation backend that errors or returns garbage for some requests of a batch.

The affected episodes are recorded as failed with the reason; the batch and the eval go on,
and the healthy episodes are neither lost nor generated twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgym_suite.agents.model_agent import ModelAgent
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.llm.base import SamplingParams
from agentgym_suite.llm.openai_backend import OpenAIBackend
from agentgym_suite.rollout.engine import RolloutEngine

from reliability.fakes import HANG_ID
from reliability.stub_openai import StubState, stub_server

TASKS = [f"task-{i}" for i in range(7)]
EXPECTED_ERRORS = {
    "task-1": "HTTP 500",
    "task-2": "not valid JSON",
    "task-3": "timed out",
    "task-4": "unexpected shape",
}


@pytest.fixture()
def stub() -> Iterator[tuple[str, StubState]]:
    with stub_server() as served:
        yield served


def _backend(url: str) -> OpenAIBackend:
    return OpenAIBackend("stub", url, api_key="", timeout=1.0, max_retries=1, backoff=0.01, max_concurrency=8)


def test_backend_turns_every_fault_into_an_error_sample(stub: tuple[str, StubState]) -> None:
    url, _ = stub
    backend = _backend(url)
    prompts = [[{"role": "user", "content": f"A closed box ({task})."}] for task in TASKS]
    rows = backend.generate(prompts, SamplingParams(max_new_tokens=8))
    by_task = dict(zip(TASKS, (row[0] for row in rows)))
    for task, reason in EXPECTED_ERRORS.items():
        sample = by_task[task]
        assert not sample.ok and sample.finish_reason == "error" and reason in (sample.error or ""), (task, sample)
    assert [by_task[t].text for t in ("task-0", "task-5", "task-6")] == ["open box"] * 3
    backend.close()


def test_eval_records_failed_generations_and_goes_on(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    agent = ModelAgent(_backend(url), temperature=0.0, max_new_tokens=8)
    result = evaluate(HANG_ID, agent, out_dir=tmp_path, env_kwargs={"n_tasks": len(TASKS)}, progress=False)
    by_task = {r.task_id: r for r in result.records}
    assert sorted(by_task) == TASKS and result.summary["complete"]
    for task, reason in EXPECTED_ERRORS.items():
        record = by_task[task]
        assert record.failed and not record.won and record.error_stage == "agent"
        assert record.error.startswith("BackendError")
        assert reason in record.error, (task, record.error)
    assert all(by_task[t].won and not by_task[t].failed for t in ("task-0", "task-5", "task-6"))
    assert state.requests["task-0"] == 2 and state.requests["task-5"] == 4  # flaky: one retry per turn
    rerun = evaluate(HANG_ID, agent, out_dir=tmp_path, env_kwargs={"n_tasks": len(TASKS)}, progress=False)
    assert rerun.ran == 0 and len(rerun.records) == len(TASKS)  # failures are kept unless --retry-failed
    assert rerun.skipped_crashed == len(EXPECTED_ERRORS)
    assert state.invalid == []  # every request the client sent is a valid chat-completions request


def test_a_failed_request_in_a_batch_fails_only_its_episode(stub: tuple[str, StubState], tmp_path: Path) -> None:
    url, state = stub
    agent = ModelAgent(_backend(url), temperature=0.0, max_new_tokens=8)
    result = evaluate(HANG_ID, agent, out_dir=tmp_path, env_kwargs={"n_tasks": len(TASKS)}, progress=False,
                      batch_size=len(TASKS))
    by_task = {r.task_id: r for r in result.records}
    assert {t for t, r in by_task.items() if r.failed} == set(EXPECTED_ERRORS)
    assert all(by_task[t].won for t in ("task-0", "task-5", "task-6"))
    for task, reason in EXPECTED_ERRORS.items():
        assert by_task[task].error.startswith("BackendError") and reason in by_task[task].error
    assert result.summary["crashed"] == len(EXPECTED_ERRORS) and result.summary["success_rate"] == 1.0


def test_rollout_batch_isolates_the_bad_requests(stub: tuple[str, StubState]) -> None:
    url, state = stub
    engine = RolloutEngine(_backend(url), max_turns=4)
    trajectories = engine.run_groups(HANG_ID, TASKS, env_kwargs={"n_tasks": len(TASKS)})
    by_task = {t.task_id: t for t in trajectories}
    for task, reason in EXPECTED_ERRORS.items():
        assert by_task[task].error_stage == "generate" and reason in by_task[task].error
        assert not by_task[task].won
    assert all(by_task[t].won and by_task[t].error is None for t in ("task-0", "task-5", "task-6"))
    # one batched call per turn served every prompt once: no healthy request was sent twice
    assert state.requests["task-0"] == 2 and state.requests["task-6"] == 2
    engine.close()

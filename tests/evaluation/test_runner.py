"""The evaluation loop: task selection, resume after a kill, crashes recorded as data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym_suite.agents.base import RandomAgent
from agentgym_suite.evaluation import agent_specs
from agentgym_suite.evaluation.agent_specs import AgentSpecError, make_agent
from agentgym_suite.evaluation.runner import EvalConfigMismatch, evaluate
from agentgym_suite.evaluation.store import read_records
from agentgym_suite.evaluation.task_selection import select_tasks
from agentgym_suite.rollout.seeding import episode_seed

from .fake_env import FakeEvalEnv, register_fake_env

FAKE = register_fake_env()
TIMING_KEYS = ("wall_s", "policy_s")


def _content(path: Path) -> list[dict[str, Any]]:
    """Records of a file without their timings, in file order."""
    out = []
    for record in read_records(path)[0]:
        data = record.to_dict()
        for key in TIMING_KEYS:
            data.pop(key)
        out.append(data)
    return out


def test_task_selection_is_seeded_and_extends() -> None:
    ids = [f"t{i}" for i in range(20)]
    first = select_tasks(ids, 5, seed=3)
    assert first == select_tasks(ids, 5, seed=3)
    assert select_tasks(ids, 8, seed=3)[:5] == first
    assert select_tasks(ids, 5, seed=4) != first
    assert sorted(select_tasks(ids, None, seed=3)) == sorted(ids)
    assert episode_seed(1, "t1", 0) != episode_seed(1, "t1", 1)
    with pytest.raises(ValueError):
        select_tasks(ids, 0, seed=0)


def test_oracle_solves_every_episode(tmp_path: Path) -> None:
    result = evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=4, k=2, seed=1, progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["success_rate"] == 1.0 and summary["pass@k"] == 1.0 and summary["pass^k"] == 1.0
    assert summary["episodes"] == 8 and summary["tasks"] == 4 and summary["complete"] is True
    assert summary["mean_turns"] == 2.0 and summary["invalid_action_rate"] == 0.0
    assert {r.attempt for r in result.records} == {0, 1}
    first = result.records[0]
    assert [t.completion_text for t in first.turns] == ["open box", f"take {first.task.split()[2]}"]
    assert first.turns[-1].reward == 1.0 and first.task_type in ("pick", "heat")


def test_resume_after_cut_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    full = tmp_path / "full"
    cut = tmp_path / "cut"
    evaluate(FAKE, "random", out_dir=full, episodes=6, k=2, seed=7, progress=False)
    lines = (full / "trajectories.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 12
    cut.mkdir()
    (cut / "trajectories.jsonl").write_bytes(b"".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    (cut / "config.json").write_bytes((full / "config.json").read_bytes())
    result = evaluate(FAKE, "random", out_dir=cut, episodes=6, k=2, seed=7, progress=False)
    assert result.ran == 7  # the 5 intact episodes were kept, the cut one and the 6 missing ran
    keys = [r.key for r in read_records(cut / "trajectories.jsonl")[0]]
    assert len(keys) == len(set(keys)) == 12
    assert (cut / "trajectories.jsonl").read_bytes().startswith(b"".join(lines[:5]))
    # per-episode seeds make the re-run episodes identical to the uninterrupted run
    assert sorted(_content(cut / "trajectories.jsonl"), key=lambda d: d["key"]) == sorted(
        _content(full / "trajectories.jsonl"), key=lambda d: d["key"]
    )
    a = json.loads((full / "summary.json").read_text())
    b = json.loads((cut / "summary.json").read_text())
    for key in ("success_rate", "mean_score", "mean_turns", "pass@k", "pass^k", "episodes"):
        assert a[key] == b[key]
    again = evaluate(FAKE, "random", out_dir=cut, episodes=6, k=2, seed=7, progress=False)
    assert again.ran == 0 and len(again.records) == 12


class InterruptingAgent(RandomAgent):
    """Raises KeyboardInterrupt on its n-th action, like Ctrl-C."""

    def __init__(self, after: int) -> None:
        super().__init__(seed=0)
        self.calls = 0
        self.after = after

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.calls += 1
        if self.calls == self.after:
            raise KeyboardInterrupt
        return super().act(observation, info)


def test_interrupted_run_continues_where_it_stopped(tmp_path: Path) -> None:
    agent = InterruptingAgent(after=9)
    with pytest.raises(KeyboardInterrupt):
        evaluate(FAKE, agent, out_dir=tmp_path, episodes=6, seed=0, max_turns=4, progress=False)
    done = [r.key for r in read_records(tmp_path / "trajectories.jsonl")[0]]
    assert 0 < len(done) < 6
    assert json.loads((tmp_path / "summary.json").read_text())["complete"] is False
    result = evaluate(FAKE, InterruptingAgent(after=-1), out_dir=tmp_path, episodes=6, seed=0, max_turns=4,
                      progress=False)
    assert result.ran == 6 - len(done)
    keys = [r.key for r in read_records(tmp_path / "trajectories.jsonl")[0]]
    assert keys[: len(done)] == done and len(set(keys)) == 6
    assert result.summary["complete"] is True


def test_env_crash_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    before = FakeEvalEnv.created
    result = evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=6, seed=0, env_kwargs={"crash_task": "task-2"},
                      progress=False)
    by_task = {r.task_id: r for r in result.records}
    crashed = by_task["task-2"]
    assert crashed.failed and not crashed.won
    assert crashed.error_stage == "step"
    assert crashed.error.startswith("RuntimeError: simulated backend crash in task-2")
    assert len(crashed.turns) == 2  # the first action went through; the one whose step raised is kept
    assert crashed.turns[0].observation == "The box opens." and crashed.turns[1].observation == ""
    assert all(r.won and not r.failed for t, r in by_task.items() if t != "task-2")
    assert result.summary["errors"] == result.summary["crashed"] == 1
    assert result.summary["success_rate"] == 1.0 and result.summary["completed"] == 5  # a crash is not a loss
    assert FakeEvalEnv.created - before == 2  # the crashed env was replaced by a fresh one
    errors = [json.loads(line)["error"] for line in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert sum(1 for e in errors if e) == 1


class FlakyAgent(RandomAgent):
    """Fails on one task as a backend would (server error) and reports tokens otherwise."""

    name = "flaky"

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.last_turn: dict[str, Any] | None = None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if info["task_id"] == "task-1":
            raise ConnectionError("backend unreachable")
        self.last_turn = {"prompt": [{"role": "user", "content": observation}], "completion_tokens": 7,
                          "thinking": "reasoning"}
        return super().act(observation, info)


def test_agent_error_is_recorded_and_tokens_are_counted(tmp_path: Path) -> None:
    before = FakeEvalEnv.created
    result = evaluate(FAKE, FlakyAgent(), out_dir=tmp_path, episodes=6, seed=0, max_turns=3, progress=False)
    by_task = {r.task_id: r for r in result.records}
    assert by_task["task-1"].error_stage == "agent"
    assert by_task["task-1"].error.startswith("ConnectionError: backend unreachable")
    ok = by_task["task-0"]
    assert ok.turns[0].completion_tokens == 7 and ok.turns[0].thinking == "reasoning"
    assert ok.turns[0].prompt[0]["role"] == "user"
    assert ok.completion_tokens == 7 * len(ok.turns)
    assert result.summary["completion_tokens"] == sum(r.completion_tokens or 0 for r in result.records)
    assert result.summary["tokens_per_s"] is not None and result.summary["tokens_per_s"] > 0
    assert result.summary["agent"] == "flaky" and result.summary["errors"] == 1
    assert FakeEvalEnv.created - before == 1  # an agent failure leaves the env in use


def test_retry_failed_reruns_only_crashed_episodes(tmp_path: Path) -> None:
    evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=6, seed=0, env_kwargs={"crash_task": "task-2"},
             progress=False)
    again = evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=6, seed=0, env_kwargs={"crash_task": "task-2"},
                     retry_failed=True, progress=False)
    assert again.ran == 1 and again.summary["errors"] == 1 and again.summary["episodes"] == 6


def test_other_settings_in_the_same_directory_are_refused(tmp_path: Path) -> None:
    evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=2, seed=0, progress=False)
    with pytest.raises(EvalConfigMismatch, match="seed"):
        evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=2, seed=1, progress=False)
    grown = evaluate(FAKE, "oracle", out_dir=tmp_path, episodes=3, k=2, seed=0, progress=False)
    assert grown.ran == 4 and grown.summary["episodes"] == 6


def test_agent_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_agent("oracle").name == "oracle"
    assert make_agent("random", seed=1).name == "random"
    agent = RandomAgent()
    assert make_agent(agent) is agent
    with pytest.raises(AgentSpecError, match="oracle, random, hf:PATH"):
        make_agent("gpt")
    with pytest.raises(AgentSpecError, match="not an agent"):
        make_agent(object())  # type: ignore[arg-type]

    def missing(name: str) -> Any:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(agent_specs.importlib, "import_module", missing)
    with pytest.raises(AgentSpecError, match="needs a model agent"):
        make_agent("tiny")


def test_unknown_env_id_raises_before_writing(tmp_path: Path) -> None:
    with pytest.raises(gym.error.Error):
        evaluate("NoSuchEnv-v0", "oracle", out_dir=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_a_directory_written_in_the_earlier_record_layout_resumes(tmp_path: Path) -> None:
    from agentgym_suite.evaluation.viewer import write_viewer

    from .test_store import V1_LINES

    (tmp_path / "trajectories.jsonl").write_text("\n".join(V1_LINES) + "\n", encoding="utf-8")
    result = evaluate(FAKE, "oracle", out_dir=tmp_path, k=2, seed=0, progress=False)
    assert result.ran == 10 and result.summary["episodes"] == 12 and result.summary["errors"] == 1
    keys = [r.key for r in read_records(tmp_path / "trajectories.jsonl")[0]]
    assert keys[:2] == ["task-3#1", "task-4#0"] and len(set(keys)) == 12
    assert "simulated backend crash in task-4" in write_viewer(tmp_path).read_text(encoding="utf-8")
    again = evaluate(FAKE, "oracle", out_dir=tmp_path, k=2, seed=0, progress=False, retry_failed=True)
    assert again.ran == 1 and again.summary["errors"] == 0 and again.summary["success_rate"] == 1.0


def test_benchmark_metrics_hook_receives_the_runs_k(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook gets the planned attempts, not a count read off the episodes that happened to finish."""
    seen: list[Any] = []

    def hook(cls: type, final_infos: list[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        seen.append((k, len(final_infos)))
        return {"k": k}

    monkeypatch.setattr(FakeEvalEnv, "benchmark_metrics", classmethod(hook))
    result = evaluate(FAKE, "oracle", out_dir=tmp_path, k=3, seed=0, env_kwargs={"crash_task": "task-0", "n_tasks": 2},
                      progress=False)
    assert result.summary["crashed"] == 3 and result.summary["benchmark_metrics"] == {"k": 3}
    assert seen == [(3, 3)]  # task-0's three attempts crashed: three scored episodes, yet k is still 3


@pytest.mark.parametrize("env_workers", [None, 2], ids=["inline", "worker-processes"])
def test_the_summary_records_the_longest_reply_the_env_reads(tmp_path: Path, env_workers: int | None) -> None:
    """A tool env's reply limit follows its declared token budget, and the run says which it was (an
    env in a worker process answers through ``env.unwrapped`` too)."""
    result = evaluate("SyntheticTools-v0", "oracle", out_dir=tmp_path, episodes=1, seed=0, progress=False,
                      env_workers=env_workers)
    env = gym.make("SyntheticTools-v0")
    try:
        expected = env.action_space.max_length
    finally:
        env.close()
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["max_action_chars"] == expected == result.summary["max_action_chars"]
    assert isinstance(expected, int) and expected > 0

"""Crash-safe JSONL storage: cut lines, missing newlines and duplicates are repaired on load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.evaluation.metrics import summarize
from agentgym_suite.evaluation.store import TrajectoryStore, read_records
from agentgym_suite.evaluation.viewer import render_html
from agentgym_suite.rollout.policies import extract_thinking
from agentgym_suite.rollout.records import Trajectory, Turn, info_subset, read_trajectories, write_trajectories

V1_RECORDS: list[dict[str, Any]] = [  # two lines of trajectories.jsonl as the earlier episode-record layout wrote them
    {"task_id": "task-3",
     "attempt": 1,
     "seed": 77,
     "env_id": "FakeEval-v0",
     "task": "take the gold key",
     "task_type": "pick",
     "initial_observation": "A closed box.",
     "turns": [{"turn": 1,
                "action": "<think>open first</think>open box",
                "observation": "The box opens.",
                "reward": 0.0,
                "action_valid": True,
                "thinking": "open first",
                "prompt": None,
                "info": {"won": False, "score": 0.5},
                "completion_tokens": 5,
                "index": 0,
                "prompt_text": "PROMPT 1",
                "completion_text": "<think>open first</think>open box"},
               {"turn": 2,
                "action": "take gold",
                "observation": "You take the key.",
                "reward": 1.0,
                "action_valid": True,
                "thinking": None,
                "prompt": [{"role": "user", "content": "The box opens."}],
                "info": {"won": True},
                "completion_tokens": 4,
                "index": 1,
                "prompt_text": "",
                "completion_text": "take gold"}],
     "won": True,
     "score": 1.0,
     "total_reward": 1.0,
     "terminated": True,
     "truncated": False,
     "error": None,
     "wall_s": 0.5,
     "agent_s": 0.25,
     "completion_tokens": 9,
     "key": "task-3#1",
     "num_turns": 2,
     "version": 1,
     "group_id": "task-3",
     "traj_id": "task-3#1",
     "episode_return": 1.0},
    {"task_id": "task-4",
     "attempt": 0,
     "seed": 78,
     "env_id": "FakeEval-v0",
     "task": "take the iron key",
     "task_type": None,
     "initial_observation": "",
     "turns": [],
     "won": False,
     "score": 0.0,
     "total_reward": 0.0,
     "terminated": False,
     "truncated": False,
     "error": "step failed: RuntimeError: simulated backend crash in task-4",
     "wall_s": 0.1,
     "agent_s": 0.05,
     "completion_tokens": None,
     "key": "task-4#0",
     "num_turns": 0,
     "version": 1,
     "group_id": "task-4",
     "traj_id": "task-4#0",
     "episode_return": 0.0},
]
V1_LINES = [json.dumps(record) for record in V1_RECORDS]


def _rec(task: str, attempt: int = 0) -> Trajectory:
    turn = Turn(0, "", "<think>x</think>go", observation="obs", reward=1.0, thinking="x", completion_tokens=3)
    return Trajectory(task, group_id=task, env_id="FakeEval-v0", seed=1, traj_id=f"{task}#{attempt}", turns=[turn],
                      won=True, attempt=attempt, policy_s=0.5, wall_s=1.0, completion_tokens=3)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    original = _rec("t1", 2)
    original.error, original.error_stage = "ValueError: bad", "agent"
    original.turns.append(Turn(1, "", "look", observation="dark", prompt=[{"role": "user", "content": "hi"}]))
    store.append(original)
    loaded, report = store.load()
    assert report.dropped_lines == 0
    assert loaded["t1#2"] == original


def test_a_record_with_unencodable_text_is_stored_and_shown(tmp_path: Path) -> None:
    from agentgym_suite.evaluation.viewer import write_viewer

    store = TrajectoryStore(tmp_path)
    record = Trajectory("t", turns=[Turn(0, "", "go \ud800 north", observation="o")], attempt=0)
    store.append(record)
    loaded, _ = store.load()
    assert loaded[record.key].turns[0].completion_text == "go \ud800 north"
    assert "go \\ud800 north" in write_viewer(tmp_path).read_text(encoding="utf-8")


def test_cut_last_line_is_dropped_and_file_repaired(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    for i in range(3):
        store.append(_rec(f"t{i}"))
    data = store.path.read_bytes()
    store.path.write_bytes(data[: len(data) - 25])  # cut into the third line
    loaded, report = store.load()
    assert sorted(loaded) == ["t0#0", "t1#0"]
    assert report.dropped_lines == 1 and report.unterminated
    assert store.path.read_bytes().endswith(b"\n")
    assert (tmp_path / "trajectories.jsonl.corrupt").read_bytes() == data[: len(data) - 25]
    store.append(_rec("t2"))
    records, report = read_records(store.path)
    assert [r.key for r in records] == ["t0#0", "t1#0", "t2#0"] and report.dropped_lines == 0


def test_valid_line_without_newline_is_kept_and_terminated(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    store.path.write_text(json.dumps(_rec("a").to_dict()), encoding="utf-8")
    loaded, report = store.load()
    assert list(loaded) == ["a#0"] and report.unterminated
    store.append(_rec("b"))
    assert [r.key for r in read_records(store.path)[0]] == ["a#0", "b#0"]


def test_duplicates_and_garbage_lines(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    store.append(_rec("a"))
    with store.path.open("a", encoding="utf-8") as handle:
        handle.write("not json\n[1, 2]\n{\"no\": \"keys\"}\n")
    store.append(_rec("a"))
    loaded, report = store.load()
    assert list(loaded) == ["a#0"]
    assert report.dropped_lines == 3 and report.duplicates == 1
    assert len(store.path.read_text(encoding="utf-8").splitlines()) == 1


def test_drop_failed_removes_crashed_episodes(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    bad = _rec("bad")
    bad.error, bad.error_stage = "RuntimeError: x", "step"
    store.append(bad)
    store.append(_rec("good"))
    loaded, report = store.load(drop_failed=True)
    assert list(loaded) == ["good#0"] and report.removed_failed == 1


def test_info_subset_and_thinking() -> None:
    info = {"won": True, "score": 0.5, "task": "t", "admissible_actions": ["a"], "privileged": {"o": 1},
            "note": "x" * 5000, "nested": {"a": 1}}
    kept = info_subset(info, None)  # what an evaluation keeps per turn
    assert kept["won"] is True and kept["score"] == 0.5
    assert "task" not in kept and "admissible_actions" not in kept and "privileged" not in kept
    assert "nested" not in kept and len(kept["note"]) == 2000
    assert info_subset(info, ("task", "nested")) == {"task": "t", "nested": "{'a': 1}"}  # named keys: always kept
    assert extract_thinking("<think> a </think><action>b</action><think>c</think>") == "a\n\nc"
    assert extract_thinking("plain") is None


def test_lines_are_rollout_trajectories_and_rollout_dumps_are_records(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    record = _rec("t1", 1)
    record.episode_return = 1.0
    store.append(record)
    (trajectory,) = read_trajectories(store.path)
    assert trajectory == record and trajectory.key == "t1#1"
    assert read_records(store.path)[0][0] == record

    rollout_file = tmp_path / "rollout.jsonl"
    turns = [Turn(index=0, prompt_text="p", completion_text="open box", reward=0.5, observation="opened")]
    lines = [Trajectory("t9", "g", "X-v0", 3, turns=turns, episode_return=0.5),
             Trajectory("t9", "g", "X-v0", 4, won=True)]
    write_trajectories(rollout_file, lines)
    stripped = [{k: v for k, v in json.loads(line).items() if k not in ("attempt", "key")}
                for line in rollout_file.read_text().splitlines()]
    rollout_file.write_text("".join(json.dumps(line) + "\n" for line in stripped))  # dumps that predate attempts
    first, second = read_records(rollout_file)[0]
    assert (first.key, second.key) == ("t9#0", "t9#1")  # numbered per task in file order
    assert first.turns[0].completion_text == "open box" and first.episode_return == 0.5 and second.won


def test_files_of_the_earlier_episode_record_layout_still_load(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_text("\n".join(V1_LINES) + "\n", encoding="utf-8")
    (won, crashed), report = read_records(path)
    assert report.dropped_lines == 0 and (won.key, crashed.key) == ("task-3#1", "task-4#0")
    assert (won.episode_return, won.policy_s, won.wall_s, won.completion_tokens) == (1.0, 0.25, 0.5, 9)
    assert won.task_type == "pick" and won.seed == 77 and won.initial_observation == "A closed box."
    first, second = won.turns
    assert (first.index, first.completion_text, first.prompt_text, first.thinking) == (
        0, "<think>open first</think>open box", "PROMPT 1", "open first")
    assert second.prompt == [{"role": "user", "content": "The box opens."}] and second.completion_tokens == 4
    assert crashed.error_stage == "step" and crashed.error == "RuntimeError: simulated backend crash in task-4"
    assert crashed.failed and crashed.broken
    summary = summarize([won, crashed], k=1)
    assert summary["errors"] == summary["crashed"] == 1 and summary["completion_tokens"] == 9
    assert summary["success_rate"] == 1.0  # the crashed episode is left out, not counted as lost
    page = render_html([won, crashed])
    assert "open first" in page and "error (step)" in page and "simulated backend crash" in page

"""Crash-safe JSONL storage: cut lines, missing newlines and duplicates are repaired on load."""

from __future__ import annotations

import json
from pathlib import Path

from agentgym_suite.evaluation.records import EpisodeRecord, TurnRecord, extract_thinking, info_subset
from agentgym_suite.evaluation.store import TrajectoryStore, read_records


def _rec(task: str, attempt: int = 0) -> EpisodeRecord:
    return EpisodeRecord(task, attempt, turns=[TurnRecord(1, "<think>x</think>go", "obs", 1.0, True)], won=True)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    store = TrajectoryStore(tmp_path)
    original = _rec("t1", 2)
    original.error = "ValueError: bad"
    store.append(original)
    loaded, report = store.load()
    assert report.dropped_lines == 0
    assert loaded["t1#2"] == original


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
    bad.error = "RuntimeError: x"
    store.append(bad)
    store.append(_rec("good"))
    loaded, report = store.load(drop_failed=True)
    assert list(loaded) == ["good#0"] and report.removed_failed == 1


def test_info_subset_and_thinking() -> None:
    info = {"won": True, "score": 0.5, "task": "t", "admissible_actions": ["a"], "privileged": {"o": 1},
            "note": "x" * 5000, "nested": {"a": 1}}
    kept = info_subset(info)
    assert kept["won"] is True and kept["score"] == 0.5
    assert "task" not in kept and "admissible_actions" not in kept and "privileged" not in kept
    assert "nested" not in kept and len(kept["note"]) == 2000
    assert extract_thinking("<think> a </think><action>b</action><think>c</think>") == "a\n\nc"
    assert extract_thinking("plain") is None


def test_lines_are_rollout_trajectories_and_back(tmp_path: Path) -> None:
    from agentgym_suite.rollout.records import Trajectory, Turn, read_trajectories, write_trajectories

    store = TrajectoryStore(tmp_path)
    record = _rec("t1", 1)
    record.env_id, record.total_reward = "FakeEval-v0", 1.0
    record.turns.append(TurnRecord(2, "look", "dark", 0.0, False, prompt=[{"role": "user", "content": "hi"}]))
    record.turns[0].prompt = "the prompt"
    store.append(record)
    (trajectory,) = read_trajectories(store.path)
    assert (trajectory.task_id, trajectory.env_id, trajectory.traj_id) == ("t1", "FakeEval-v0", "t1#1")
    assert trajectory.episode_return == 1.0 and trajectory.won
    assert [t.index for t in trajectory.turns] == [0, 1]
    assert trajectory.turns[0].completion_text == "<think>x</think>go"
    assert trajectory.turns[0].prompt_text == "the prompt"
    assert read_records(store.path)[0][0] == record

    rollout_file = tmp_path / "rollout.jsonl"
    turns = [Turn(index=0, prompt_text="p", completion_text="open box", reward=0.5, observation="opened")]
    write_trajectories(rollout_file, [Trajectory("t9", "g", "X-v0", 3, turns=turns, episode_return=0.5),
                                      Trajectory("t9", "g", "X-v0", 4, won=True, attempt=1)])
    first, second = read_records(rollout_file)[0]
    assert (first.key, second.key) == ("t9#0", "t9#1")
    assert first.turns[0].action == "open box" and first.turns[0].turn == 1 and first.turns[0].prompt == "p"
    assert first.total_reward == 0.5 and second.won

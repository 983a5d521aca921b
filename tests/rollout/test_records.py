"""Trajectory records: JSONL round trip and Dataset conversion."""

from __future__ import annotations

import json

import pytest

from agentgym_suite.rollout import Trajectory, TrajectoryWriter, Turn, read_trajectories, to_dataset


def _trajectory(k: int) -> Trajectory:
    turns = [Turn(index=i, prompt_text=f"p{i}", completion_text=f"c{i}", prompt_ids=[1, 2], completion_ids=[3, 4 + i],
                  logprobs=[-0.1, -0.2], reward=float(i), action_valid=i % 2 == 0, observation=f"o{i}",
                  info={"won": False, "turn": i + 1}, terminated=i == 1) for i in range(2)]
    return Trajectory(task_id=f"t{k}", group_id="g", env_id="Fake-v0", seed=k, traj_id=f"0.{k}", mode="chat",
                      turns=turns, episode_return=1.0, won=True, score=1.0, terminated=True,
                      token_ids=[1, 2, 3, 4, 9, 3, 5], token_mask=[0, 0, 1, 1, 0, 1, 1],
                      token_logprobs=[0, 0, -0.1, -0.2, 0, -0.1, -0.2], prompt_length=2, turn_spans=[(2, 4), (5, 7)],
                      error=None if k else "RuntimeError: boom", error_stage=None if k else "step",
                      attempt=k, wall_s=0.5, policy_s=0.25, completion_tokens=4)


def test_jsonl_round_trip_appends_and_flushes(tmp_path):
    path = tmp_path / "out" / "rollouts.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(_trajectory(0))
        assert len(path.read_text().splitlines()) == 1  # flushed before the writer closes
        writer.write(_trajectory(1))
    with TrajectoryWriter(path) as writer:  # a second writer appends
        writer.write(_trajectory(2))
    back = read_trajectories(path)
    assert back == [_trajectory(0), _trajectory(1), _trajectory(2)]
    assert back[0].failed and not back[1].failed and back[1].turns[1].done
    assert json.loads(path.read_text().splitlines()[0])["turn_spans"] == [[2, 4], [5, 7]]


def test_text_utf8_cannot_encode_is_kept_exactly(tmp_path):
    """A lone surrogate (JSON allows ``\\ud800`` in a server's reply) must not make the writer raise or
    lose the episode: the line falls back to ASCII escapes and reads back to the same strings."""
    odd = _trajectory(1)
    odd.turns[0].completion_text = "go \ud800 north"
    path = tmp_path / "rollouts.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(_trajectory(2))
        writer.write(odd)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and "\\ud800" in lines[1]
    assert read_trajectories(path) == [_trajectory(2), odd]


def test_older_lines_are_read_with_the_failure_stage_split_off(tmp_path):
    old = _trajectory(0).to_dict()
    for key in ("error_stage", "attempt", "wall_s", "policy_s", "completion_tokens", "key", "version"):
        old.pop(key)
    old["error"] = "step failed: RuntimeError: boom"  # how the stage was written before it had a field
    env_reported = dict(old, error="env reported: the simulator died", task_id="t9")
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(env_reported) + "\n")
    first, second = read_trajectories(path)
    assert (first.error, first.error_stage) == ("RuntimeError: boom", "step") and first.broken
    assert (second.error, second.error_stage) == ("the simulator died", "env")
    assert not second.broken  # the env reported the error and terminated the episode: judged, not broken
    assert first.turns == _trajectory(0).turns and first.completion_tokens is None


def test_corrupt_line_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_trajectory(1).to_dict()) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_trajectories(path)


def test_dataset_layouts():
    trajectories = [_trajectory(0), _trajectory(1)]
    turns = to_dataset(trajectories, layout="turn")
    assert turns.num_rows == 4
    assert turns[1]["completion_ids"] == [3, 5] and turns[1]["reward"] == 1.0 and turns[0]["error"] == "RuntimeError: boom"
    assert turns[0]["error_stage"] == "step" and turns[2]["error_stage"] == ""
    assert set(turns.column_names) >= {"group_id", "traj_id", "prompt_ids", "logprobs", "episode_return", "action_valid"}
    episodes = to_dataset(trajectories, layout="trajectory")
    assert episodes.num_rows == 2
    assert episodes[0]["token_mask"] == [0, 0, 1, 1, 0, 1, 1] and episodes[0]["turn_spans"] == [[2, 4], [5, 7]]
    assert episodes[1]["rewards"] == [0.0, 1.0]
    with pytest.raises(ValueError, match="layout"):
        to_dataset(trajectories, layout="rows")

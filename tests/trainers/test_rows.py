"""Training rows from rollout-engine trajectories: chat token sequences in both layouts."""

from __future__ import annotations

from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.trainers.rows import build_rows


def _chat_trajectory() -> Trajectory:
    # prompt [1 2 3] | gen [4 5] | env [6 7] | gen [8] | env+next prompt [9] (after a truncated last turn)
    turns = [Turn(index=k, prompt_text="", completion_text=c, state=s, reward=r, action_valid=v)
             for k, (c, s, r, v) in enumerate([("a", "s0", 0.0, True), ("b", "s1", 1.0, False)])]
    return Trajectory(task_id="t", group_id="g", env_id="E", seed=0, traj_id="x", mode="chat", turns=turns,
                      episode_return=1.0, token_ids=[1, 2, 3, 4, 5, 6, 7, 8, 9], token_mask=[0, 0, 0, 1, 1, 0, 0, 1, 0],
                      token_logprobs=[0, 0, 0, -0.4, -0.5, 0, 0, -0.8, 0], prompt_length=3,
                      turn_spans=[(3, 5), (7, 8)])


def test_turn_rows_read_prompts_from_the_token_sequence():
    rows = build_rows([_chat_trajectory()], "turn", families=["fam"])
    assert [(r.prompt_ids, r.completion_ids) for r in rows] == [([1, 2, 3], [4, 5]), ([1, 2, 3, 4, 5, 6, 7], [8])]
    assert rows[1].logprobs == [-0.8] and rows[1].invalid and rows[1].step_reward == 1.0
    assert [r.anchor for r in rows] == ["s0", "s1"] and {r.ret for r in rows} == {1.0} and rows[0].family == "fam"


def test_trajectory_row_masks_env_tokens_and_stops_at_the_last_generation():
    [row] = build_rows([_chat_trajectory()], "trajectory")
    assert row.prompt_ids == [1, 2, 3] and row.completion_ids == [4, 5, 6, 7, 8]
    assert row.env_mask == [1, 1, 0, 0, 1] and row.logprobs == [-0.4, -0.5, 0, 0, -0.8]
    assert row.invalid and len(row.turns) == 2

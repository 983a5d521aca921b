"""Training rows from rollout-engine trajectories: chat token sequences in both layouts."""

from __future__ import annotations

import json

import pytest

from agentgym_suite.core.role_generation import RoleGeneration
from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.trainers.rows import build_rows


def generic(*generations) -> list[RoleGeneration]:
    """EnvACE's records as the generic ones its env reports in ``info["role_generations"]``."""
    return [g.as_role_generation() for g in generations]


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


def test_simulator_rows_carry_the_return_and_skip_untrainable_generations():
    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    trained = SimulatorGeneration("t", turn=2, prompt_ids=[1, 2], completion_ids=[3, 4, 5], logprobs=[-0.1, -0.2, -0.3],
                                  has_token_ids=True, contract_valid=True, completion_text="<execution_result>")
    remote = SimulatorGeneration("t", turn=2, completion_text="{}", has_token_ids=False)  # no ids: not trainable
    broken = SimulatorGeneration("u", turn=3, prompt_ids=[1], completion_ids=[7], has_token_ids=True)
    turn = Turn(index=0, prompt_text="p", completion_text="a", prompt_ids=[9], completion_ids=[8], logprobs=[-1.0],
                role_generations=generic(trained, remote, broken))
    traj = Trajectory(task_id="t", group_id=7, env_id="E", seed=0, traj_id=1, turns=[turn], episode_return=0.5)
    rows = [r for r in build_rows([traj], "turn", generation_roles=("simulator",)) if r.role == "simulator"]
    assert len(rows) == 2
    first, second = rows
    assert first.ret == 0.5 and first.step_reward == 0.5 and first.env_mask == [1, 1, 1] and first.group == 7
    assert first.position == 2 and first.invalid is False and first.anchor == "t" and first.logprobs == [-0.1, -0.2, -0.3]
    assert second.invalid is True and second.logprobs == [0.0]  # empty text (the released rule); no log-probs recorded
    assert [r.turn_idx for r in rows] == [0, 2]  # the index among all of the episode's generations


def test_role_generations_survive_a_trajectory_file_round_trip():
    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    gen = SimulatorGeneration("search", {"q": "x"}, call_id="c1", turn=1, prompt_ids=[1], completion_ids=[2],
                              logprobs=[-0.5], has_token_ids=True, contract_valid=True, result={"ok": True})
    traj = Trajectory(task_id="t", group_id="g", env_id="E", seed=0,
                      turns=[Turn(index=0, prompt_text="", completion_text="", role_generations=generic(gen))])
    again = Trajectory.from_dict(json.loads(json.dumps(traj.to_dict())))
    assert again.turns[0].role_generations == generic(gen)
    assert again.turns[0].role_generations[0].details["arguments"] == {"q": "x"}  # the env's own fields travel along
    # plain dicts, as older trajectory files hold them, are read as typed records too
    assert SimulatorGeneration.from_dict({"tool_name": "search", "turn": 4, "extra": 1}).turn == 4
    assert RoleGeneration.from_dict({"role": "simulator", "turn": 4, "extra": 1}).turn == 4
    with pytest.raises(ValueError, match="'role'"):
        RoleGeneration.from_dict({"turn": 4})


def test_only_generations_of_the_given_roles_become_rows():
    gens = [RoleGeneration("simulator", prompt_ids=[1], completion_ids=[2], has_token_ids=True, completion_text="x"),
            RoleGeneration("judge", prompt_ids=[1], completion_ids=[3], has_token_ids=True, completion_text="y")]
    turn = Turn(index=0, prompt_text="p", completion_text="a", prompt_ids=[9], completion_ids=[8], role_generations=gens)
    traj = Trajectory(task_id="t", group_id=1, env_id="E", seed=0, traj_id=1, turns=[turn], episode_return=1.0)
    assert [(r.role, r.turn_idx) for r in build_rows([traj], "turn", generation_roles=("judge",))] == [("agent", 0),
                                                                                                       ("judge", 1)]
    assert all(r.generated == (r.role != "agent") for r in build_rows([traj], "trajectory",
                                                                       generation_roles=("simulator", "judge")))


def test_a_simulator_row_is_invalid_only_when_its_text_is_empty():
    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    broken = SimulatorGeneration("t", turn=1, prompt_ids=[1], completion_ids=[2], has_token_ids=True,
                                 contract_valid=False, completion_text="no tags at all")
    blank = SimulatorGeneration("t", turn=1, prompt_ids=[1], completion_ids=[2], has_token_ids=True,
                                contract_valid=False, completion_text=" \n")
    turn = Turn(index=0, prompt_text="p", completion_text="a", role_generations=generic(broken, blank))
    traj = Trajectory(task_id="t", group_id=1, env_id="E", seed=0, traj_id=1, turns=[turn], episode_return=0.5)
    rows = [r for r in build_rows([traj], "turn", generation_roles=("simulator",)) if r.role == "simulator"]
    assert [r.invalid for r in rows] == [False, True] and [r.ret for r in rows] == [0.5, 0.5]


def test_a_simulator_row_for_an_invalid_call_is_scored_on_its_validation():
    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    rejected = SimulatorGeneration("nope", turn=1, prompt_ids=[1], completion_ids=[2], has_token_ids=True,
                                   expected_error="TOOL_NOT_AVAILABLE", validation_reward=1.0)
    accepted = SimulatorGeneration("nope", turn=1, prompt_ids=[1], completion_ids=[2], has_token_ids=True,
                                   expected_error="TOOL_NOT_AVAILABLE", validation_reward=0.0)
    valid = SimulatorGeneration("ok", turn=1, prompt_ids=[1], completion_ids=[2], has_token_ids=True)
    turn = Turn(index=0, prompt_text="p", completion_text="a", prompt_ids=[9], completion_ids=[8], logprobs=[-1.0],
                role_generations=generic(rejected, accepted, valid))
    traj = Trajectory(task_id="t", group_id=1, env_id="E", seed=0, traj_id=1, turns=[turn], episode_return=0.25)
    rows = [r for r in build_rows([traj], "turn", generation_roles=("simulator",)) if r.role == "simulator"]
    assert [r.ret for r in rows] == [1.0, 0.0, 0.25]

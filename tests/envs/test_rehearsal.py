"""EnvACE-Rehearsal-v0: real pass-through equals the base env, error semantics, reward modes, records."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration as registration
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.methods.envace import RehearsalEnv, format_execution_result
from agentgym_suite.methods.envace.generation import simulator_generations
from agentgym_suite.methods.envace.scripted import ScriptedBackend

from .oracle import play_oracle

registration.register_all()


def _finmcp_kwargs(tmp: Path) -> dict[str, Any]:
    from agentgym_suite.envs.finmcp import FinMCPEnv

    return FinMCPEnv.fixture_kwargs(tmp)


def _play_oracle(env: gymnasium.Env, task_id: str, replan: bool, limit: int = 60) -> list[tuple[str, float, bool, bool]]:
    """The oracle on ``task_id`` (asked again each step when ``replan``, else the plan made at reset);
    (observation, reward, terminated, won) per step."""
    return play_oracle(env, task_id, limit, seed=3, plan_at_reset=not replan, when_done="Thanks, that is all.",
                       check=False).outcomes()


CASES = [  # env id, make kwargs, task ids (None: the first three), ask the oracle every step
    ("SyntheticTools-v0", {}, ["w0-t0", "w1-t3", "w7-t4"], True),
    ("Tau2-v0", {"domain": "retail"}, ["0", "5"], True),
    ("BFCL-v0", {"category": "base"}, ["multi_turn_base_0", "multi_turn_base_1"], False),
    ("BFCL-v0", {"category": "simple"}, None, False),
    ("VitaBench-v0", {"domain": "delivery"}, None, False),
    ("FinMCP-v0", "fixtures", ["1", "2", "201", "202", "602"], False),
]


def _available(env_id: str) -> bool:
    return not registration.missing_requirements(registration.entry(env_id))


@pytest.mark.parametrize("env_id,kwargs,task_ids,replan", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_real_world_oracle_matches_base_env(env_id: str, kwargs: Any, task_ids: list[str] | None, replan: bool,
                                            tmp_path: Path) -> None:
    if not _available(env_id):
        pytest.skip(f"{env_id} is not available here: {registration.missing_requirements(registration.entry(env_id))}")
    kwargs = _finmcp_kwargs(tmp_path) if kwargs == "fixtures" else kwargs
    base = gymnasium.make(env_id, **kwargs)
    rehearsal = gymnasium.make("EnvACE-Rehearsal-v0", base_env=env_id, base_env_kwargs=kwargs, world_model="real")
    assert rehearsal.unwrapped.task_ids() == base.unwrapped.task_ids()
    ids = task_ids or base.unwrapped.task_ids()[:3]
    wins = 0
    for task_id in ids:
        expected = _play_oracle(base, task_id, replan)
        got = _play_oracle(rehearsal, task_id, replan)
        assert got == expected, task_id
        wins += got[-1][3]
    assert wins >= len(ids) - 1  # the oracles win (VitaBench's wins most, not all, tasks)


def test_check_env_with_real_world_model() -> None:
    env = RehearsalEnv(world_model="real")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


def test_default_make_is_offline_and_lazy() -> None:
    env = gymnasium.make("EnvACE-Rehearsal-v0")
    inner = env.unwrapped
    assert inner.base_env_id == "SyntheticTools-v0" and inner.world_model.spec == "default"
    _, info = env.reset(seed=0)
    assert not inner.world_model.loaded and simulator_generations(info) == []
    assert info["reward_mode"] == "checklist" and info["world_model"] == "default"


def _table_world(results: dict[str, Any]) -> ScriptedBackend:
    return ScriptedBackend(lambda name, args: format_execution_result(results.get(name, {"ok": True})))


def test_simulated_results_reach_the_caller_and_nothing_executes() -> None:
    backend = _table_world({"search_vehicles": [{"id": "vh-0000", "name": "Imagined"}]})
    env = RehearsalEnv(world_model=backend, base_env_kwargs={"seed": 0})
    env.reset(options={"task_id": "w0-t0"})
    before = env.env.database()
    obs, reward, terminated, _, info = env.step(env.oracle()[0])
    assert "Imagined" in obs and not terminated and reward == 0.0
    assert backend.calls == [("search_vehicles", {"query": "Quiet Raven"})]
    [gen] = simulator_generations(info)
    assert gen.role == "simulator" and gen.tool_name == "search_vehicles" and gen.contract_valid
    assert gen.result == [{"id": "vh-0000", "name": "Imagined"}] and gen.turn == 1
    assert "## Candidate tools" in gen.prompt_messages[1]["content"]
    assert env.env.database() == before  # no tool ran
    assert env.tool_log[-1].result == gen.result


def test_parallel_calls_are_one_batched_generation_in_order() -> None:
    backend = ScriptedBackend(lambda name, args: format_execution_result({"echo": args}))
    env = RehearsalEnv(world_model=backend, base_env_kwargs={"seed": 0})
    env.reset(options={"task_id": "w0-t0"})
    block = '\n<tool_call>\n{"name": "search_vehicles", "arguments": {"query": "%s"}}\n</tool_call>'
    obs, *_, info = env.step(block % "A" + block % "B" + block % "C")
    assert backend.batches == [3]
    assert [g.arguments["query"] for g in simulator_generations(info)] == ["A", "B", "C"]
    assert [g.index for g in simulator_generations(info)] == [0, 1, 2]
    contents = [json.loads(m["content"]) for m in env.messages if m["role"] == "tool"]
    assert [c["echo"]["query"] for c in contents] == ["A", "B", "C"]


def test_gold_calls_reward_wins_with_oracle_calls_and_a_plausible_world() -> None:
    env = RehearsalEnv(world_model=_table_world({}), base_env_kwargs={"seed": 0}, reward_mode="gold_calls")
    env.reset(options={"task_id": "w0-t0"})
    reward, terminated, info = 0.0, False, {}
    for action in env.oracle():
        _, reward, terminated, _, info = env.step(action)
    assert terminated and reward == 1.0 and info["won"]
    env.reset(options={"task_id": "w0-t0"})
    _, reward, terminated, _, info = env.step("I am done.")
    assert terminated and reward == 0.0 and not info["won"]


@pytest.mark.parametrize("reply", [
    "<execution_result>\n{\"error_tool_call\": {\"code\": \"INVALID_PARAMETERS\", \"message\": \"no\", \"details\": \"\"}}\n</execution_result>",
    "this is not the contract",
    "<execution_result>\n{}\n</execution_result>",
])
def test_simulator_error_or_bad_output_ends_episode_with_zero(reply: str) -> None:
    env = RehearsalEnv(world_model=ScriptedBackend(lambda n, a: reply), base_env_kwargs={"seed": 0})
    env.reset(options={"task_id": "w0-t0"})
    obs, reward, terminated, _, info = env.step(env.oracle()[0])
    assert terminated and reward == 0.0 and not info["won"] and "error_tool_call" in obs
    assert info["error"]


def test_validation_variant_unparseable_call_reaches_the_simulator_and_still_ends_the_episode() -> None:
    backend = ScriptedBackend(lambda name, args: format_execution_result(
        {"error_tool_call": {"code": "INVALID_TOOL_CALL_FORMAT", "message": "unbalanced tags", "details": ""}}))
    env = RehearsalEnv(world_model=backend, base_env_kwargs={"seed": 0}, variant="validation")
    env.reset(options={"task_id": "w0-t0"})
    obs, reward, terminated, _, info = env.step('<tool_call>{"name": "search_vehicles", "arguments": {"query": "x"}')
    assert terminated and reward == 0.0 and not info["action_valid"]  # the released parser's rule
    [gen] = simulator_generations(info)  # but the simulator saw the block and answered it
    assert gen.expected_error == "INVALID_TOOL_CALL_FORMAT" and gen.validation_reward == 1.0
    assert "unbalanced tags" in obs and "did not parse" in gen.prompt_messages[-1]["content"]


def _validating_world(name: str, arguments: dict[str, Any]) -> str:
    """A simulator that validates like the real env: unknown tools and a non-string query are refused."""
    if name != "search_vehicles":
        return format_execution_result({"error_tool_call": {"code": "TOOL_NOT_AVAILABLE", "message": name, "details": ""}})
    if not isinstance(arguments.get("query"), str):
        return format_execution_result({"error_tool_call": {"code": "INVALID_PARAMETERS", "message": "query", "details": ""}})
    return format_execution_result([{"id": "vh-1", "name": "x"}])


@pytest.mark.parametrize("action,code", [
    ('<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>', "TOOL_NOT_AVAILABLE"),
    ('<tool_call>{"name": "search_vehicles", "arguments": {"query": 5}}</tool_call>', "INVALID_PARAMETERS"),
])
def test_validation_variant_scores_the_simulator_rejecting_invalid_calls(action: str, code: str) -> None:
    backend = ScriptedBackend(_validating_world)
    env = RehearsalEnv(world_model=backend, base_env_kwargs={"seed": 0}, variant="validation")
    env.reset(options={"task_id": "w0-t0"})
    obs, reward, terminated, _, info = env.step(action)
    assert len(backend.calls) == 1  # the env did not filter the call
    [gen] = simulator_generations(info)
    assert gen.expected_error == code and gen.validation_reward == 1.0
    assert terminated and reward == 0.0 and not info["action_valid"] and code in obs


def test_validation_variant_a_simulator_accepting_an_invalid_call_gets_no_validation_reward() -> None:
    env = RehearsalEnv(world_model=_table_world({}), base_env_kwargs={"seed": 0}, variant="validation")
    env.reset(options={"task_id": "w0-t0"})
    _, _, terminated, _, info = env.step('<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>')
    [gen] = simulator_generations(info)
    assert gen.expected_error == "TOOL_NOT_AVAILABLE" and gen.validation_reward == 0.0
    assert not terminated  # the simulator's answer decides, as in the released env
    env.reset(options={"task_id": "w0-t0"})
    _, _, _, _, info = env.step(env.oracle()[0])
    [gen] = simulator_generations(info)
    assert gen.expected_error == "" and gen.validation_reward is None  # a valid call: the row carries the return


def test_errors_can_be_kept_in_the_episode() -> None:
    env = RehearsalEnv(world_model=ScriptedBackend(lambda n, a: "garbage"), base_env_kwargs={"seed": 0}, end_on_tool_error=False)
    env.reset(options={"task_id": "w0-t0"})
    obs, reward, terminated, _, _ = env.step(env.oracle()[0])
    assert not terminated and "INVALID_SIMULATOR_OUTPUT" in obs


def test_judge_reward_mode_with_callable_judge() -> None:
    seen: dict[str, Any] = {}

    def judge(transcript: str, criteria: list[str]) -> list[bool]:
        seen["transcript"], seen["criteria"] = transcript, criteria
        return [True] * (len(criteria) - 1) + [False]

    env = RehearsalEnv(world_model=_table_world({}), base_env_kwargs={"seed": 0}, reward_mode="judge", judge=judge)
    env.reset(options={"task_id": "w0-t0"})
    for action in env.oracle():
        _, reward, terminated, _, info = env.step(action)
    n = len(seen["criteria"])
    assert terminated and reward == pytest.approx((n - 1) / n) and not info["won"]
    assert "User: " in seen["transcript"] and "Tool[search_vehicles]" in seen["transcript"]
    assert any("adjust_vehicle_mileage_k" in c for c in seen["criteria"])


def test_base_reward_mode_refused_where_the_check_needs_execution() -> None:
    with pytest.raises(ValueError, match="gold_calls"):
        RehearsalEnv(world_model=_table_world({}), reward_mode="base")
    with pytest.raises(ValueError, match="reward_mode"):
        RehearsalEnv(world_model="real", reward_mode="nonsense")


def test_finmcp_base_reward_without_execution(tmp_path: Path) -> None:
    env = RehearsalEnv(base_env="FinMCP-v0", base_env_kwargs=_finmcp_kwargs(tmp_path), world_model=_table_world({}))
    assert env.reward_mode == "base"
    env.reset(options={"task_id": "202"})
    bank = env.example_bank()
    assert set(bank.tasks) <= set(env.env.training_tasks()[1])
    own = [{k: e[k] for k in ("name", "arguments", "result")} for e in bank.examples if e["task"] == "202"]
    assert not any(e in env._examples for e in own)  # never the task being played
    grounded = RehearsalEnv(base_env="FinMCP-v0", base_env_kwargs=_finmcp_kwargs(tmp_path), world_model=_table_world({}),
                            grounding="task")
    grounded.reset(options={"task_id": "202"})
    assert "BatchGetStrategyRiskInfo" in json.dumps(grounded._examples)  # opt-in: the task's own recordings
    for action in env.oracle():
        _, reward, terminated, _, info = env.step(action)
        if terminated:
            break
    assert terminated and reward == 1.0 and info["won"]


def test_bad_arguments_explain_the_fix() -> None:
    class CommandEnv(gymnasium.Env):
        pass

    with pytest.raises(ValueError, match="not a tool env"):
        RehearsalEnv(base_env=CommandEnv(), world_model="real")
    with pytest.raises(TypeError, match="world_model"):
        RehearsalEnv(world_model=42)
    with pytest.raises(ValueError, match="itself"):
        RehearsalEnv(base_env="EnvACE-Rehearsal-v0")


@pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found")
def test_tau2_rehearsal_uses_scripted_user_and_gold_calls() -> None:
    env = gymnasium.make("EnvACE-Rehearsal-v0", base_env="Tau2-v0", base_env_kwargs={"domain": "retail"},
                         world_model=_table_world({}))
    env.reset(options={"task_id": "5"})
    info: dict[str, Any] = {}
    for _ in range(30):
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle()[0])
        if terminated or truncated:
            break
    assert terminated and info["reward_mode"] == "gold_calls" and reward == 1.0


@pytest.mark.skipif(not has_benchmark_data("tau2", "domains") or not _available("BFCL-v0"), reason="needs tau2 data and bfcl")
def test_mixture_of_base_envs_and_policy_placeholder() -> None:
    env = gymnasium.make("EnvACE-Rehearsal-v0", base_env=["BFCL-v0", "Tau2-v0"], base_env_id="BFCL-v0",
                         base_env_kwargs={"BFCL-v0": {"category": "simple"}, "Tau2-v0": {"domain": "retail"}},
                         world_model="policy")
    ids = env.unwrapped.task_ids()
    assert any(i.startswith("BFCL-v0/") for i in ids) and any(i.startswith("Tau2-v0/") for i in ids)
    _, info = env.reset(options={"task_id": "Tau2-v0/5"})
    assert info["base_env_id"] == "Tau2-v0" and info["reward_mode"] == "gold_calls"
    obs, reward, terminated, _, info = env.step(env.unwrapped.oracle()[0])
    assert terminated and reward == 0.0 and "set_world_model" in obs  # no policy given yet: data, not a crash
    env.unwrapped.set_world_model(_table_world({}))
    _, info = env.reset(options={"task_id": next(i for i in ids if i.startswith("BFCL-v0/"))})
    assert info["reward_mode"] == "base"
    _, reward, terminated, _, info = env.step(env.unwrapped.oracle()[0])
    assert terminated and reward == 1.0 and info["won"]


def test_released_variant_reads_messages_as_the_released_caller_parser() -> None:
    backend = ScriptedBackend(lambda name, args: format_execution_result({"echo": args}))
    env = RehearsalEnv(world_model=backend, base_env_kwargs={"seed": 0})
    env.reset(options={"task_id": "w0-t0"})
    listed = ('Both.\n<tool_call>\n[{"name": "search_vehicles", "arguments": {"query": "A"}}, '
              '{"name": "search_vehicles", "parameters": {"query": "B"}}]\n</tool_call>')
    _, _, terminated, _, info = env.step(listed)  # a list in one block: two calls, as released
    assert [a["query"] for _, a in backend.calls] == ["A", "B"] and not terminated
    env.reset(options={"task_id": "w0-t0"})
    obs, reward, terminated, _, info = env.step('Now.<tool_call>{"name": "search_vehicles", "arguments": {}}</tool_call>')
    assert len(backend.calls) == 2  # a malformed message reaches no simulator
    assert terminated and reward == 0.0 and info["action_valid"] and "NO_TOOL_CALL_FOUND" in obs
    assert simulator_generations(info) == []


def test_a_simulator_generation_round_trips_through_its_generic_record_and_json() -> None:
    from agentgym_suite.core.role_generation import RoleGeneration
    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    gen = SimulatorGeneration("search", {"q": "x"}, call_id="c1", turn=2, index=1, prompt_messages=[{"role": "user", "content": "p"}],
                              prompt_text="p", prompt_ids=[1], completion_ids=[2, 3], logprobs=[-0.5, -0.25], completion_text="c",
                              finish_reason="length", has_token_ids=True, contract_valid=True, result={"ok": [1]},
                              expected_error="unknown_tool", validation_reward=0.5)
    record = gen.as_role_generation()
    assert SimulatorGeneration.from_role_generation(record) == gen
    assert SimulatorGeneration.from_role_generation(json.loads(json.dumps(record.to_dict()))) == gen  # a served env's dict
    judge = RoleGeneration("judge", turn=2, completion_text="verdict")
    assert simulator_generations({"role_generations": [judge.to_dict(), record]}) == [gen]  # other roles are skipped
    assert simulator_generations({}) == []
    with pytest.raises(ValueError, match="role 'judge'"):
        SimulatorGeneration.from_role_generation(judge)

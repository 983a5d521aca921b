"""Tau2-v0: check_env per domain, oracle replay (DB hash), scripted and LLM users, scoring, bad actions."""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.tau2 import LLMUser, ScriptedUser, Tau2Env
from agentgym_suite.envs.tau2.toolkit import safe_calculate
from agentgym_suite.envs.tau2.users import STOP

from .oracle import play_oracle

pytestmark = pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found; set AGENTGYM_DATA")
agentgym_suite.registration.register_all()


@pytest.mark.parametrize("domain", ["mock", "retail", "airline"])
def test_check_env(domain: str) -> None:
    env = gymnasium.make("Tau2-v0", domain=domain, split="test" if domain != "mock" else "base")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_oracle_wins_every_mock_task() -> None:
    env = Tau2Env(domain="mock")
    for task_id in env.task_ids():
        run = play_oracle(env, task_id, max_steps=60)
        assert run.reward == 1.0 and run.info["won"], (task_id, run.info["reward_breakdown"])


@pytest.mark.parametrize("domain,task_ids", [("retail", ["0", "5", "20"]), ("airline", ["1", "5", "10"])])
def test_oracle_wins_sample_tasks_with_matching_db_hash(domain: str, task_ids: list[str]) -> None:
    env = Tau2Env(domain=domain)
    for task_id in task_ids:
        run = play_oracle(env, task_id, max_steps=60)
        breakdown = run.info["reward_breakdown"]
        assert run.reward == 1.0 and breakdown["components"]["DB"] == 1.0, (task_id, breakdown)
        assert breakdown["details"]["db_hash"] == breakdown["details"]["gold_db_hash"]


@pytest.mark.slow
@pytest.mark.parametrize("domain", ["retail", "airline"])
def test_oracle_wins_every_task(domain: str) -> None:
    env = Tau2Env(domain=domain)
    for task_id in env.task_ids():
        run = play_oracle(env, task_id, max_steps=60)
        assert run.reward == 1.0 and run.info["reward_breakdown"]["components"]["DB"] == 1.0, task_id


def test_doing_nothing_fails_the_db_check_of_a_write_task() -> None:
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "5"})  # gold includes a return request
    _, reward, done, _, info = env.step("Sorry, I cannot help with that.")
    for _ in range(12):
        if done:
            break
        _, reward, done, _, info = env.step("Sorry, I cannot help with that.")
    assert done and reward == 0.0 and info["reward_breakdown"]["components"]["DB"] == 0.0


def test_nl_assertions_unscored_without_judge_and_scored_with_one() -> None:
    env = Tau2Env(domain="retail")
    task_id = next(t for t in env.task_ids() if env.data.tasks[t]["evaluation_criteria"].get("nl_assertions")
                   and "NL_ASSERTION" in env.data.tasks[t]["evaluation_criteria"]["reward_basis"])
    run = play_oracle(env, task_id, max_steps=60)
    assert run.reward == 1.0 and run.info["reward_breakdown"]["unscored"] == ["NL_ASSERTION"]
    assert "NL_ASSERTION" not in run.info["reward_breakdown"]["components"]
    seen: list[list[str]] = []

    def judge(assertions: list[str], messages: list[dict]) -> list[bool]:
        seen.append(assertions)
        return [False] * len(assertions)

    run = play_oracle(Tau2Env(domain="retail", nl_judge=judge), task_id, max_steps=60)
    assert seen and run.reward == 0.0 and run.info["reward_breakdown"]["components"]["NL_ASSERTION"] == 0.0
    assert run.info["reward_breakdown"]["unscored"] == []


def test_airline_communicate_basis() -> None:
    env = Tau2Env(domain="airline")
    task_id = next(t for t in env.task_ids() if env.data.tasks[t]["evaluation_criteria"]["communicate_info"])
    env.reset(options={"task_id": task_id})
    for action in env.oracle()[:-1]:
        env.step(action)
    done, steps = False, 0
    while not done and steps < 12:
        _, reward, done, _, info = env.step("Done, goodbye.")
        steps += 1
    assert done and info["reward_breakdown"]["components"]["COMMUNICATE"] == 0.0 and reward == 0.0


def test_scripted_user_opens_with_reason_and_known_info_and_stops_when_done() -> None:
    env = Tau2Env(domain="retail")
    obs, info = env.reset(options={"task_id": "5"})
    scenario = env.data.tasks["5"]["user_scenario"]["instructions"]
    assert scenario["reason_for_call"][:40] in obs and scenario["known_info"] in obs
    assert info["messages"][0]["role"] == "system" and "policy" in info["messages"][0]["content"].lower()
    obs, _, done, _, _ = env.step("Could you tell me your zip code?")
    assert not done and obs == "Yes, please go ahead."
    obs, _, done, _, _ = env.step("Let me look into it.")
    assert not done and obs in (scenario["known_info"], scenario["reason_for_call"])


def test_transfer_ends_conversation_with_transfer_token() -> None:
    env = Tau2Env(domain="mock")
    env.reset(options={"task_id": "impossible_task_1"})
    env.step('<tool_call>{"name": "transfer_to_human_agents", "arguments": {"summary": "delete tasks"}}</tool_call>')
    _, reward, done, _, info = env.step("You are being transferred to a human agent.")
    assert done and info["messages"][-1]["content"] == "###TRANSFER###" and reward == 1.0


def test_message_history_is_prefilled_and_replayed() -> None:
    env = Tau2Env(domain="mock")
    _, info = env.reset(options={"task_id": "update_task_with_message_history"})
    roles = [m["role"] for m in info["messages"]]
    assert roles[:5] == ["system", "user", "assistant", "tool", "assistant"]
    assert "task_2" in env.world.agent.db["tasks"]


def test_llm_user_gets_flipped_roles_and_can_stop() -> None:
    calls: list[list[dict]] = []

    def generate(messages: list[dict]) -> str:
        calls.append(messages)
        return "Please mark task_1 completed." if len(calls) == 1 else STOP

    env = Tau2Env(domain="mock", user_generate=generate)
    obs, _ = env.reset(options={"task_id": "update_task_1"})
    assert obs == "Please mark task_1 completed."
    assert calls[0][0]["role"] == "system" and "task_1" in calls[0][0]["content"]
    env.step('<tool_call>{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}</tool_call>')
    _, reward, done, _, info = env.step("Done, it is completed.")
    assert done and reward == 1.0
    assert calls[-1][-1] == {"role": "user", "content": "Done, it is completed."}


def test_llm_user_backend_failure_ends_episode_not_crash() -> None:
    def broken(messages: list[dict]) -> str:
        raise RuntimeError("backend down")

    user = LLMUser(broken)
    assert user.first_message({"user_scenario": {"instructions": "x"}}) == "###OUT-OF-SCOPE###"
    assert "backend down" in (user.last_error or "")


def test_same_task_runs_identically_k_times() -> None:
    env = Tau2Env(domain="airline")
    runs = []
    for _ in range(3):
        run = play_oracle(env, "5", max_steps=60)
        runs.append((run.reward, run.info["reward_breakdown"]["details"]["db_hash"], json.dumps(run.info["messages"])))
    assert runs[0] == runs[1] == runs[2]
    a, b = Tau2Env(domain="retail"), Tau2Env(domain="retail")
    assert a.reset(seed=4)[0] == b.reset(seed=4)[0]


def test_splits() -> None:
    assert len(Tau2Env(domain="retail", split="train").task_ids()) == 74
    assert len(Tau2Env(domain="airline", split="test").task_ids()) == 20
    with pytest.raises(ValueError, match="splits"):
        Tau2Env(domain="retail", split="nope")


@pytest.mark.parametrize("action,needle", [
    ("<tool_call>{\"name\": \"get_order_details\", \"arguments\": {\"order_id\": }</tool_call>", "INVALID_TOOL_CALL_FORMAT"),
    ('<tool_call>{"name": "drop_database", "arguments": {}}</tool_call>', "TOOL_NOT_AVAILABLE"),
    ('<tool_call>{"name": "get_order_details", "arguments": {"order_id": 7}}</tool_call>', "INVALID_PARAMETERS"),
    ('<tool_call>{"name": "get_order_details", "arguments": {}}</tool_call>', "INVALID_PARAMETERS"),
    ("<tool_call>" + "y" * 9000 + "</tool_call>", "characters long"),
    ("", "empty"),
])
def test_bad_actions_are_invalid_with_explanation(action: str, needle: str) -> None:
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "0"})
    obs, reward, done, _, info = env.step(action)
    assert info["action_valid"] is False and not done and reward == 0.0 and needle in obs


def test_tool_refusal_is_reported() -> None:
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "0"})
    obs, _, done, _, info = env.step('<tool_call>{"name": "cancel_pending_order", "arguments": {"order_id": "#W0000000", "reason": "no longer needed"}}</tool_call>')
    assert info["action_valid"] and not done and "Order not found" in obs


def test_calculate_never_evaluates_code() -> None:
    assert safe_calculate("(2 + 3) * 4 / 3") == "6.67"
    for bad in ("__import__('os')", "2 ** 100", "1 / 0", "()", "9" * 600):
        with pytest.raises(ValueError):
            safe_calculate(bad)


def test_unknown_task_id() -> None:
    with pytest.raises(UnknownTaskError, match="Unknown task id"):
        Tau2Env(domain="mock").reset(options={"task_id": "no_such_task"})


def test_missing_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="AGENTGYM_DATA"):
        Tau2Env(domain="airline")


def test_unknown_domain_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="domain"):
        Tau2Env(domain="banking")

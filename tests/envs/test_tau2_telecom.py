"""Tau2-v0 telecom: check_env, oracle replay, the simulated phone, account-phone sync, env assertions, bad actions."""

from __future__ import annotations

import json
import warnings

import gymnasium
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.envs.tau2 import Tau2Env
from agentgym_suite.envs.tau2.data import load_domain
from agentgym_suite.envs.tau2.scripted_user import device_instruction, requested_user_actions
from agentgym_suite.envs.tau2.world import build_world

from .oracle import play_oracle

pytestmark = pytest.mark.skipif(not has_benchmark_data("tau2", "domains/telecom"), reason="tau2 data not found; set AGENTGYM_DATA")
agentgym_suite.registration.register_all()

DATA_TASK = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"
"""Data switched off and the allowance used up: the customer toggles data, the agent refuels 2 GB."""

UNWINNABLE: dict[str, str] = {}
"""Telecom tasks the oracle cannot win, with the reason. Empty: every base and small task is won."""


def tool_call(name: str, **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def task_like(env: Tau2Env, *needles: str) -> str:
    return next(t for t in env.task_ids() if all(n in t for n in needles))


def finish(env: Tau2Env, text: str = "Goodbye.", limit: int = 15) -> tuple[float, dict]:
    done, reward, info, steps = False, 0.0, {}, 0
    while not done and steps < limit:
        _, reward, done, _, info = env.step(text)
        steps += 1
    assert done
    return reward, info


@pytest.fixture(scope="module")
def env() -> Tau2Env:
    return Tau2Env(domain="telecom")


def test_check_env() -> None:
    env = gymnasium.make("Tau2-v0", domain="telecom", split="test")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def test_splits_and_policy(env: Tau2Env) -> None:
    assert len(env.task_ids()) == 114
    assert len(Tau2Env(domain="telecom", split="small").task_ids()) == 20
    assert len(Tau2Env(domain="telecom", split="train").task_ids()) == 74
    _, info = env.reset(options={"task_id": DATA_TASK})
    system = info["messages"][0]["content"]
    assert "<main_policy>" in system and "<tech_support_policy>" in system
    names = {s["function"]["name"] for s in env.world.agent.schemas()}
    assert {"get_customer_by_phone", "refuel_data", "send_payment_request", "transfer_to_human_agents"} <= names
    assert "set_data_usage" not in names and "toggle_data" not in names  # set-up functions and phone tools are not the agent's


@pytest.mark.parametrize("needles", [
    ("data_mode_off|data_usage_exceeded",),  # phone action + agent refuel
    ("[mms_issue]", "break_apn_mms_setting"),  # APN reset then reboot
    ("overdue_bill_suspension", "unseat_sim_card"),  # payment request, payment on the phone, resume line, reboots
    ("lock_sim_card_pin",),  # cannot be fixed: transfer (ACTION basis)
])
def test_oracle_wins_sample_tasks(env: Tau2Env, needles: tuple[str, ...]) -> None:
    task_id = task_like(env, *needles)
    run = play_oracle(env, task_id, max_steps=60)
    breakdown = run.info["reward_breakdown"]
    assert run.reward == 1.0 and breakdown["components"]["ENV_ASSERTION"] == 1.0, (task_id, breakdown)
    assert all(breakdown["details"]["env_assertions"])


@pytest.mark.slow
@pytest.mark.parametrize("split", ["base", "small"])
def test_oracle_wins_every_telecom_task(split: str) -> None:
    env = Tau2Env(domain="telecom", split=split)
    lost = {}
    for task_id in env.task_ids():
        run = play_oracle(env, task_id, max_steps=80)
        if run.reward != 1.0:
            lost[task_id] = run.info["reward_breakdown"]
    unexpected = {t: b for t, b in lost.items() if t not in UNWINNABLE}
    won = len(env.task_ids()) - len(lost)
    assert not unexpected, f"{won}/{len(env.task_ids())} won; unexpected losses: {unexpected}"
    assert won == len(env.task_ids()) - len(set(UNWINNABLE) & set(env.task_ids()))


def test_env_assertion_fails_without_the_phone_action(env: Tau2Env) -> None:
    env.reset(options={"task_id": DATA_TASK})
    env.step(tool_call("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0))
    reward, info = finish(env)  # the customer is never asked to turn mobile data back on
    breakdown = info["reward_breakdown"]
    assert reward == 0.0 and breakdown["components"]["ENV_ASSERTION"] == 0.0
    assert breakdown["details"]["env_assertions"] == [False, False, True]  # data off, so no speed; refuel done


def test_env_assertion_fails_without_the_agent_action(env: Tau2Env) -> None:
    env.reset(options={"task_id": DATA_TASK})
    obs, _, done, _, _ = env.step(device_instruction("toggle_data", {}))
    assert not done and "Mobile Data is now ON" in obs
    reward, info = finish(env)
    assert reward == 0.0 and info["reward_breakdown"]["details"]["env_assertions"] == [False, False, False]


def test_transfer_task_needs_the_transfer(env: Tau2Env) -> None:
    task_id = task_like(env, "lock_sim_card_pin")
    env.reset(options={"task_id": task_id})
    reward, info = finish(env)
    breakdown = info["reward_breakdown"]
    assert reward == 0.0 and breakdown["components"]["ACTION"] == 0.0 and breakdown["components"]["ENV_ASSERTION"] == 1.0


def test_phone_state_follows_the_account() -> None:
    data = load_domain("telecom")
    world = build_world(data, data.tasks[DATA_TASK])
    phone, account = world.user, world.agent
    assert phone.surroundings["mobile_data_usage_exceeded"] and not phone.mobile_data_working()
    phone.handlers()["toggle_data"]()
    assert not phone.mobile_data_working()  # allowance still used up
    account.handlers()["refuel_data"](customer_id="C1001", line_id="L1002", gb_amount=2.0)
    assert not phone.surroundings["mobile_data_usage_exceeded"] and phone.mobile_data_working()
    assert phone.speed() == (275.0, "Excellent")  # 5G, excellent signal
    draft = account.bill("B1003")
    assert draft["line_items"][-1]["amount"] == 4.0 and draft["total_due"] == 4.0  # 2 GB at $2/GB on the draft bill
    phone.turn_data_saver_mode_on()
    assert phone.speed() == (55.0, "Good")


def test_payment_request_reaches_the_phone_and_payment_settles_the_bill(env: Tau2Env) -> None:
    task_id = task_like(env, "overdue_bill_suspension")
    env.reset(options={"task_id": task_id})
    phone = env.world.user
    assert phone.check_payment_request() == "No payment request has been made."
    env.step(tool_call("send_payment_request", customer_id="C1001", bill_id="B1234321"))
    assert "bill B1234321" in phone.check_payment_request()
    obs, *_ = env.step(device_instruction("make_payment", {}))
    assert "Payment of 65.0 USD" in obs
    assert env.world.agent.bill("B1234321")["status"] == "Paid" and phone.surroundings["payment_request"] is None
    obs, *_ = env.step(tool_call("send_payment_request", customer_id="C1001", bill_id="B1234321"))
    env.step(tool_call("send_payment_request", customer_id="C1001", bill_id="B1002"))
    assert "already awaiting payment" in env.messages[-1]["content"]


def test_device_simulation_basics() -> None:
    data = load_domain("telecom")
    phone = build_world(data, data.tasks[DATA_TASK]).user
    phone.turn_airplane_mode_on()
    assert phone.device["network_connection_status"] == "no_service" and "Airplane Mode" in phone.status_bar()
    phone.toggle_airplane_mode()
    assert phone.device["network_connection_status"] == "connected"
    phone.break_apn_settings()
    assert phone.device["network_connection_status"] == "no_service"
    phone.reset_apn_settings()
    assert phone.device["network_connection_status"] == "no_service"  # applies at reboot
    phone.reboot_device()
    assert phone.device["network_connection_status"] == "connected" and phone.device["active_apn_settings"]["apn_name"] == "internet"
    phone.set_network_mode_preference("2g_only")
    assert phone.device["network_technology_connected"] == "2G" and not phone.mms_works()


@pytest.mark.parametrize("action,needle", [
    (tool_call("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=-1), "positive"),
    (tool_call("refuel_data", customer_id="C1001", line_id="L1004", gb_amount=1.0), "not found for customer C1001"),
    (tool_call("get_customer_by_id", customer_id="C9999"), "C9999 not found"),
    (tool_call("get_details_by_id", id="X1"), "Unknown ID format or type: X1"),
    (tool_call("resume_line", customer_id="C1001", line_id="L1001"), "must be suspended"),
    (tool_call("send_payment_request", customer_id="C1001", bill_id="B1004"), "not found for customer"),
    (tool_call("toggle_data"), "Tool 'toggle_data' not found."),  # a phone tool is not the agent's (upstream's words)
])
def test_bad_agent_actions_get_explanatory_errors(env: Tau2Env, action: str, needle: str) -> None:
    env.reset(options={"task_id": DATA_TASK})
    obs, reward, done, _, _ = env.step(action)
    assert not done and reward == 0.0 and needle in obs


@pytest.mark.parametrize("request_text,needle", [
    (device_instruction("toggle_data", {"extra": 1}), "got an unexpected keyword argument 'extra'"),  # Python's words
    (device_instruction("set_apn_settings", {"apn_settings": "internet"}), "'str' object has no attribute 'apn_name'"),
])
def test_bad_phone_actions_are_reported_by_the_customer(env: Tau2Env, request_text: str, needle: str) -> None:
    env.reset(options={"task_id": DATA_TASK})
    obs, _, done, _, info = env.step(request_text)
    assert not done and info["action_valid"] and "did not work" in obs and needle in obs


@pytest.mark.parametrize("request_text,needle", [
    (device_instruction("set_network_mode_preference", {"mode": "6g"}), "Failed to set network mode: '6g' is not a valid option"),
    (device_instruction("make_payment", {}), "You do not have a payment request."),
    (device_instruction("grant_app_permission", {"app_name": "camera", "permission": "sms"}),
     "Error. App 'camera' not found. Cannot grant permission."),
    (device_instruction("grant_app_permission", {"app_name": "messaging", "permission": "gps"}),
     "Error. Permission 'gps' not tracked for app 'messaging', available permissions: ['sms', 'storage', 'phone', 'network']"),
])
def test_phone_answers_that_upstream_gives_as_text_not_errors(env: Tau2Env, request_text: str, needle: str) -> None:
    env.reset(options={"task_id": DATA_TASK})
    obs, _, done, _, _ = env.step(request_text)
    assert not done and needle in obs


def test_requested_user_actions_parsing() -> None:
    names = ["toggle_data", "toggle_data_saver_mode", "grant_app_permission", "reboot_device"]
    task = {"evaluation_criteria": {"actions": [
        {"requestor": "user", "name": "grant_app_permission", "arguments": {"app_name": "messaging", "permission": "storage"}}]}}
    text = 'First toggle_data_saver_mode, then grant_app_permission {"app_name": "browser", "permission": "sms"} and reboot_device; reboot_device again.'
    assert requested_user_actions(text, names, task) == [
        ("toggle_data_saver_mode", {}),
        ("grant_app_permission", {"app_name": "browser", "permission": "sms"}),
        ("reboot_device", {}),
    ]
    assert requested_user_actions("Please grant_app_permission now", names, task) == [
        ("grant_app_permission", {"app_name": "messaging", "permission": "storage"})]
    assert requested_user_actions("Could you restart your phone?", names, task) == []


def test_user_tool_calls_count_for_actions_and_are_reported(env: Tau2Env) -> None:
    run = play_oracle(env, DATA_TASK, max_steps=20)
    assert run.info["user_tool_calls"] == [{"name": "toggle_data", "arguments": {}}]
    assert env._calls_so_far() == [("toggle_data", {}), ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0})]


def test_llm_user_runs_its_phone_tools() -> None:
    prompts: list[list[dict]] = []
    script = iter([
        "My mobile data does not work.",
        '<tool_call>{"name": "toggle_data", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>',
        "Done, mobile data is on now.",
    ])

    def generate(messages: list[dict]) -> str:
        prompts.append(messages)
        return next(script)

    env = Tau2Env(domain="telecom", user_generate=generate)
    env.reset(options={"task_id": DATA_TASK})
    assert not env.world.user.device["data_enabled"]
    obs, _, done, _, info = env.step("Please turn your mobile data on.")
    assert not done and obs == "Done, mobile data is on now."
    assert env.world.user.device["data_enabled"] and info["user_tool_calls"] == [  # an unknown tool is a call too (upstream)
        {"name": "toggle_data", "arguments": {}}, {"name": "launch_rocket", "arguments": {}}]
    assert "toggle_data" in prompts[1][0]["content"] and "<tool_call>" in prompts[1][0]["content"]
    assert "Mobile Data is now ON" in prompts[2][-1]["content"]  # the tool result came back to the model
    assert "Tool 'launch_rocket' not found." in prompts[3][-1]["content"]  # upstream's words


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["toggle_data", "grant_app_permission", "set_network_mode_preference", "set_apn_settings", "make_payment"]),
       arguments=st.dictionaries(st.sampled_from(["app_name", "permission", "mode", "apn_settings", "x"]),
                                 st.one_of(st.integers(), st.text(max_size=8), st.none(), st.lists(st.integers(), max_size=2)), max_size=3))
def test_any_phone_request_is_answered_never_raised(env: Tau2Env, name: str, arguments: dict) -> None:
    env.reset(options={"task_id": DATA_TASK})
    obs, _, done, _, info = env.step(device_instruction(name, arguments))
    assert info["action_valid"] and not done and name in obs


def test_a_customer_message_with_several_calls_is_two_steps() -> None:
    """As upstream's orchestrator counts them: the customer's tool-call message is one step and the environment's
    answer to all its calls another; each failed call is one error."""
    script = iter([
        "My mobile data does not work.",
        '<tool_call>{"name": "toggle_data", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "check_status_bar", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>',
        "Done.",
    ])
    env = Tau2Env(domain="telecom", user_generate=lambda messages: next(script))
    env.reset(options={"task_id": DATA_TASK})
    assert (env._counter.steps, env._counter.errors) == (1, 0)  # the customer's opening (the greeting is no step)
    env.step("Please turn your mobile data on.")
    # the agent's message, the customer's calls, the environment's answer, the customer's reply
    assert (env._counter.steps, env._counter.errors) == (5, 1)
    assert [m["role"] for m in env.customer_view] == ["assistant", "user", "assistant", "user", "tool", "tool", "tool", "user"]

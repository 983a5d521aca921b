"""Tau2-v0: check_env per domain, oracle replay (DB hashes), scripted and LLM users, scoring, bad actions.

The user-simulator protocol, the NL-assertion judge and the two-database DB check follow
τ²-bench (sierra-research/tau2-bench): ``tau2.user.user_simulator.UserSimulator`` (system
prompt = guidelines + ``<scenario>``, end tokens), ``tau2.evaluator.evaluator_env
.EnvironmentEvaluator.calculate_reward`` (agent and user DB hashes against the gold run) and
``tau2.evaluator.evaluator.evaluate_simulation`` (a basis that cannot be evaluated is an error).
"""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.tau2 import LLMUser, ScriptedUser, Tau2Env, UserSimulatorError
from agentgym_suite.envs.tau2.scripted_user import CONFIRM_REPLY, UNKNOWN_REPLY, to_first_person
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


UPSTREAM_UNWINNABLE_MOCK = {
    "update_task_with_user_tools": "its env assertion wants the customer to dismiss a notification, which changes the user "
                                   "database, while its gold actions leave the notification unread; τ²-bench's DB check "
                                   "compares the user database hash with the gold run's, so DB is 0 whenever ENV_ASSERTION is 1",
}


def test_oracle_wins_every_mock_task() -> None:
    env = Tau2Env(domain="mock")
    for task_id in env.task_ids():
        if task_id in UPSTREAM_UNWINNABLE_MOCK:
            continue
        run = play_oracle(env, task_id, max_steps=60)
        assert run.reward == 1.0 and run.info["won"], (task_id, run.info["reward_breakdown"])


def test_db_check_compares_the_user_database_with_the_gold_run() -> None:
    env = Tau2Env(domain="mock")
    run = play_oracle(env, "update_task_with_user_tools", max_steps=20)
    breakdown = run.info["reward_breakdown"]
    details = breakdown["details"]
    assert details["db_hash"] == details["gold_db_hash"]  # the agent side matches the gold run
    assert details["user_db_hash"] != details["gold_user_db_hash"]  # the dismissed notification does not
    assert breakdown["components"]["DB"] == 0.0 and breakdown["components"]["ENV_ASSERTION"] == 1.0 and run.reward == 0.0
    env.reset(options={"task_id": "update_task_1"})
    env.world.user.db["notifications"]["notif_x"] = {"notification_id": "notif_x", "status": "read"}  # only the phone differs
    env.step('<tool_call>{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}</tool_call>')
    _, reward, done, _, info = env.step("Your task is marked completed.")
    assert done and info["reward_breakdown"]["components"]["DB"] == 0.0 and reward == 0.0


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
    env = Tau2Env(domain=domain, judge=lambda assertions, messages: [True] * len(assertions))  # NL assertions need a judge
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


def nl_task_ids(env: Tau2Env) -> list[str]:
    return [t for t in env.task_ids() if env.data.tasks[t]["evaluation_criteria"].get("nl_assertions")
            and "NL_ASSERTION" in env.data.tasks[t]["evaluation_criteria"]["reward_basis"]]


def test_nl_assertion_tasks_are_not_scorable_without_a_judge() -> None:
    env = Tau2Env(domain="retail")
    assert len(nl_task_ids(env)) == 40 and len(env.task_ids()) == 114
    task_id = nl_task_ids(env)[0]
    run = play_oracle(env, task_id, max_steps=60)
    breakdown = run.info["reward_breakdown"]
    assert run.info["scorable"] is False and breakdown["scorable"] is False and breakdown["unscored"] == ["NL_ASSERTION"]
    assert run.reward == 0.0 and not run.info["won"] and run.info["nl_judge"] == "none"
    assert breakdown["components"]["DB"] == 1.0 and "judge" in breakdown["details"]["note"]
    plain = next(t for t in env.task_ids() if t not in nl_task_ids(env))
    run = play_oracle(env, plain, max_steps=60)
    assert run.info["scorable"] is True and run.reward == 1.0


def test_nl_assertions_scored_by_a_judge_callable_or_model() -> None:
    env = Tau2Env(domain="retail")
    task_id = nl_task_ids(env)[0]
    seen: list[list[str]] = []

    def judge(assertions: list[str], messages: list[dict]) -> list[bool]:
        seen.append(assertions)
        return [True] * len(assertions)

    run = play_oracle(Tau2Env(domain="retail", judge=judge), task_id, max_steps=60)
    assert seen and run.reward == 1.0 and run.info["scorable"] and run.info["reward_breakdown"]["components"]["NL_ASSERTION"] == 1.0
    run = play_oracle(Tau2Env(domain="retail", nl_judge=lambda a, m: [False] * len(a)), task_id, max_steps=60)
    assert run.reward == 0.0 and run.info["scorable"] and run.info["reward_breakdown"]["unscored"] == []
    model_env = Tau2Env(domain="retail", judge="tiny")  # a real (random) model: it cannot answer in the format, so 0, but scored
    model_env.nl_judge.chat.max_new_tokens = 16  # keep the random model's reply short
    run = play_oracle(model_env, task_id, max_steps=60)
    assert run.info["nl_judge"] == "llm:tiny" and run.info["scorable"] is True
    assert run.info["reward_breakdown"]["components"]["NL_ASSERTION"] == 0.0 and run.reward == 0.0
    assert "Expected outcomes" in model_env.nl_judge.prompt(["x"], [{"role": "user", "content": "hi"}])[1]["content"]

    def broken(assertions: list[str], messages: list[dict]) -> list[bool]:
        raise RuntimeError("judge down")

    run = play_oracle(Tau2Env(domain="retail", judge=broken), task_id, max_steps=60)
    assert run.info["scorable"] is False and "judge down" in run.info["reward_breakdown"]["details"]["note"]


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


def test_scripted_user_discloses_the_scenario_progressively_in_the_first_person() -> None:
    env = Tau2Env(domain="retail")
    obs, info = env.reset(options={"task_id": "5"})
    scenario = env.data.tasks["5"]["user_scenario"]["instructions"]
    assert obs.startswith("I want to exchange the water bottle and the desk lamp. I want to exchange")
    assert "mei_kovacs_8020" not in obs and "You " not in obs and "If the agent asks" in scenario["reason_for_call"]
    assert info["task"] == obs and info["user_simulator"] == "scripted"
    assert info["messages"][0]["role"] == "system" and "policy" in info["messages"][0]["content"].lower()
    obs, _, done, _, _ = env.step("Could you tell me your user id and zip code?")
    assert not done and obs == "I am mei_kovacs_8020 in zipcode 28236."
    obs, _, done, _, _ = env.step("What is your email address?")
    assert not done and obs == UNKNOWN_REPLY  # the scenario says the customer does not remember it
    obs, _, done, _, _ = env.step("Shall I proceed with the exchange?")
    assert not done and obs == CONFIRM_REPLY
    _, _, done, _, info = env.step("I have looked into it.")  # no question: the customer takes it as the end
    assert done and info["messages"][-1]["content"] == STOP


def test_scripted_user_does_not_read_the_gold_actions() -> None:
    env = Tau2Env(domain="mock")
    env.reset(options={"task_id": "update_task_1"})
    env.step(env.oracle()[0])  # the gold action is done: the old scripted user said ###STOP### to anything now
    obs, _, done, _, _ = env.step("Is there anything else I can help you with?")
    assert not done and STOP not in obs
    env.reset(options={"task_id": "update_task_1"})
    _, _, done, _, info = env.step("Your task is done.")  # nothing was done, yet a statement ends the conversation
    assert done and info["reward_breakdown"]["components"]["DB"] == 0.0


def test_to_first_person() -> None:
    assert to_first_person("You are Olivia Lopez, and you live in Texas in 76171.") == "I am Olivia Lopez, and I live in Texas in 76171."
    assert to_first_person("Your order arrived; the agent should give you a refund to yourself.") == \
        "My order arrived; the agent should give me a refund to myself."
    assert to_first_person("You're not sure if you've paid.") == "I'm not sure if I've paid."


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
    obs, info = env.reset(options={"task_id": "update_task_1"})
    assert obs == "Please mark task_1 completed." and info["user_simulator"] == "llm:generate"
    system = calls[0][0]
    assert system["role"] == "system" and "task_1" in system["content"] and "<scenario>" in system["content"]
    assert all(token in system["content"] for token in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"))
    assert calls[0][1] == {"role": "user", "content": "Hi! How can I help you today?"}
    env.step('<tool_call>{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}</tool_call>')
    _, reward, done, _, info = env.step("Done, it is completed.")
    assert done and reward == 1.0 and info["tau2_end"] == STOP and info["scorable"]
    assert calls[-1][-1] == {"role": "user", "content": "Done, it is completed."}


def test_llm_user_backend_failure_ends_episode_as_a_user_error_not_a_crash() -> None:
    def broken(messages: list[dict]) -> str:
        raise RuntimeError("backend down")

    user = LLMUser(broken)
    with pytest.raises(UserSimulatorError, match="backend down"):
        user.first_message({"user_scenario": {"instructions": "x"}})
    assert "backend down" in (user.last_error or "")
    env = Tau2Env(domain="mock", user=user)
    obs, _ = env.reset(options={"task_id": "update_task_1"})
    assert obs == ""
    _, reward, done, _, info = env.step("Hello?")  # upstream ends a run the user simulator broke with reward 0
    assert done and reward == 0.0 and info["tau2_end"] == "user_error" and "backend down" in info["user_error"]


def test_user_setting_is_validated() -> None:
    with pytest.raises(ValueError, match="llm:<backend spec>"):
        Tau2Env(domain="mock", user="gpt-4")
    with pytest.raises(ValueError, match="llm:<backend spec>"):
        Tau2Env(domain="mock", user="llm:")
    with pytest.raises(TypeError):
        Tau2Env(domain="mock", user=42)
    assert Tau2Env(domain="mock", user="scripted").user_label == "scripted"
    assert isinstance(Tau2Env(domain="mock").user, ScriptedUser)


def test_same_task_runs_identically_k_times() -> None:
    env = Tau2Env(domain="airline")
    runs = []
    for _ in range(3):
        run = play_oracle(env, "5", max_steps=60)
        details = run.info["reward_breakdown"]["details"]
        runs.append((run.reward, details["db_hash"], details["user_db_hash"], json.dumps(run.info["messages"])))
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
    ('<tool_call>{"name": "drop_database", "arguments": {}}</tool_call>', "Tool 'drop_database' not found."),  # upstream's words
    ('<tool_call>{"name": "get_order_details", "arguments": {}}</tool_call>',  # Python's words, as upstream calls the tool
     "RetailTools.get_order_details() missing 1 required positional argument: 'order_id'"),
    ("<tool_call>" + "y" * 70_000 + "</tool_call>", "characters long"),  # over 4096 tokens' worth (16 chars each)
    ("", "empty"),
])
def test_bad_actions_are_invalid_with_explanation(action: str, needle: str) -> None:
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "0"})
    obs, reward, done, _, info = env.step(action)
    assert info["action_valid"] is False and not done and reward == 0.0 and needle in obs


def test_an_argument_of_the_wrong_json_type_reaches_the_tool_as_upstream_passes_it() -> None:
    """Upstream calls the tool with the value as written: an int order id is not found, in the tool's words."""
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "0"})
    _, _, done, _, info = env.step('<tool_call>{"name": "get_order_details", "arguments": {"order_id": 7}}</tool_call>')
    assert not done and info["messages"][-1] == {**info["messages"][-1], "role": "tool", "content": "Error: Order not found"}
    assert env.tool_messages[-1]["error"] is True and "INVALID_PARAMETERS" not in env.tool_messages[-1]["content"]


def test_tool_refusal_is_reported() -> None:
    env = Tau2Env(domain="retail")
    env.reset(options={"task_id": "0"})
    obs, _, done, _, info = env.step('<tool_call>{"name": "cancel_pending_order", "arguments": {"order_id": "#W0000000", "reason": "no longer needed"}}</tool_call>')
    assert info["action_valid"] and not done and "Order not found" in obs


def test_calculate_never_evaluates_code() -> None:
    assert safe_calculate("(2 + 3) * 4 / 3") == "6.67" and safe_calculate(" 2 ** 10 // 3 ") == "341.0"
    with pytest.raises(ValueError, match="Invalid characters"):
        safe_calculate("__import__('os')")
    with pytest.raises(ValueError, match="Exponent too large"):  # upstream's eval would hang; refused here
        safe_calculate("9 ** 9 ** 9 ** 9")
    # everything else fails as Python fails on the same text in upstream's eval
    for bad, error in (("1 / 0", ZeroDivisionError), ("()", TypeError), ("(2)(3)", TypeError), ("1 +", SyntaxError),
                       ("9" * 600, OverflowError)):
        with pytest.raises(error):
            safe_calculate(bad)


class _PowerAgent:
    """Asks ``calculate`` for a power the guard refuses, then says goodbye."""

    name = "power"

    def reset(self, env: object, *, seed: int | None = None) -> None:
        self.turns = 0

    def act(self, observation: str, info: dict) -> str:
        self.turns += 1
        if self.turns == 1:
            return '<tool_call>{"name": "calculate", "arguments": {"expression": "9 ** 9 ** 9"}}</tool_call>'
        return "Thank you, goodbye. ###STOP###"


def test_the_calculate_guard_is_a_departure_the_episode_and_the_summary_name(tmp_path) -> None:
    from agentgym_suite.evaluation.runner import evaluate
    from agentgym_suite.envs.tau2.toolkit import CALCULATE_GUARD_DEPARTURE

    env = Tau2Env(domain="retail", user="scripted")
    env.reset(options={"task_id": "0"})
    _, _, _, _, info = env.step('<tool_call>{"name": "calculate", "arguments": {"expression": "2 ** 10"}}</tool_call>')
    assert CALCULATE_GUARD_DEPARTURE not in info["leaderboard_departures"]
    obs, _, _, _, info = env.step('<tool_call>{"name": "calculate", "arguments": {"expression": "9 ** 9 ** 9"}}</tool_call>')
    assert "Exponent too large" in obs and CALCULATE_GUARD_DEPARTURE in info["leaderboard_departures"]
    assert info["comparable_to_leaderboard"] is False
    env.reset(options={"task_id": "0"})  # a new episode starts without it
    _, _, _, _, info = env.step("How can I help?")
    assert CALCULATE_GUARD_DEPARTURE not in info["leaderboard_departures"]
    summary = evaluate("Tau2-v0", _PowerAgent(), out_dir=tmp_path / "run", episodes=1, progress=False,
                       env_kwargs={"domain": "retail", "user": "scripted"}).summary
    assert CALCULATE_GUARD_DEPARTURE in summary["leaderboard_departures"] and not summary["comparable_to_leaderboard"]


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


def test_agent_prompt_is_upstreams_instruction_and_policy_blocks_after_which_the_agent_greets() -> None:
    env = Tau2Env(domain="mock")
    env.reset(options={"task_id": env.task_ids()[0]})
    system, greeting = env.messages[0], env.messages[1]
    assert system["content"].startswith("<instructions>\nYou are a customer service agent")
    assert system["content"].endswith(f"<policy>\n{env.data.policy}\n</policy>")
    assert greeting == {"role": "assistant", "content": "Hi! How can I help you today?"}


def test_action_check_compares_the_keys_of_the_call_made_unless_compare_args_is_set() -> None:
    from agentgym_suite.envs.tau2.evaluation import action_matches, communicated

    gold = {"name": "f", "arguments": {"a": 1, "b": 2}}
    assert action_matches(gold, "f", {"a": 1})  # a left-out gold argument is not compared
    assert not action_matches(gold, "f", {"a": 1, "b": 2, "c": 3})  # an extra argument is
    assert not action_matches(gold, "f", {"a": 2})
    assert action_matches({**gold, "compare_args": ["b"]}, "f", {"a": 9, "b": 2})
    assert action_matches({**gold, "compare_args": []}, "f", {})
    # the message's commas are ignored, the info's are not (as upstream)
    messages = [{"role": "assistant", "content": "The total is 1,234 dollars."}]
    assert communicated(["1234"], messages) == [True] and communicated(["1,234"], messages) == [False]


def test_limits_end_the_conversation_with_reward_0() -> None:
    env = Tau2Env(domain="retail", max_errors=3)
    env.reset(options={"task_id": "0"})
    bad = '<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W0"}}</tool_call>'
    for _ in range(2):
        _, _, done, _, _ = env.step(bad)
        assert not done
    _, reward, done, _, info = env.step(bad)
    assert done and reward == 0.0 and info["termination_reason"] == "too_many_errors"
    assert info["reward_breakdown"]["details"]["db_match"] is None
    assert any("max_errors=3" in reason for reason in env.leaderboard_departures())


def test_telecom_workflow_is_telecom_under_the_workflow_policy() -> None:
    from agentgym_suite.core.data import benchmark_dir

    workflow = (benchmark_dir("tau2") / "domains" / "telecom" / "tech_support_workflow.md").read_text(encoding="utf-8")
    variant, base = Tau2Env(domain="telecom-workflow"), Tau2Env(domain="telecom")
    assert workflow.strip()[:200] in variant.data.policy and workflow.strip()[:200] not in base.data.policy
    assert variant.task_ids() == base.task_ids()

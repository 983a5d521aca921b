"""VitaBench-v0: check_env, oracle and scripted-user episodes, scoring, judge, bad actions."""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration  # noqa: F401
from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.core.errors import DataNotFoundError, UnknownTaskError
from agentgym_suite.envs.vitabench import VitaBenchEnv
from agentgym_suite.envs.vitabench.rubric_judge import sliding_windows
from agentgym_suite.envs.vitabench.user import STOP, LLMUser

pytestmark = pytest.mark.skipif(not has_benchmark_data("vitabench", "domains"), reason="set AGENTGYM_DATA to the shared data")


def play(env: VitaBenchEnv, actions: list[str]) -> tuple[float, bool, dict]:
    reward, terminated, info = 0.0, False, {}
    for action in actions:
        _, reward, terminated, _, info = env.step(action)
        if terminated:
            break
    return reward, terminated, info


def call(name: str, **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_check_env(domain: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(VitaBenchEnv(domain=domain), skip_render_check=True)


def test_make() -> None:
    env = gymnasium.make("VitaBench-v0", domain="instore")
    obs, info = env.reset(seed=3)
    assert obs.startswith("Hi.") and any(t["function"]["name"] == "instore_book" for t in info["tools"])


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_oracle_with_scripted_user_wins(domain: str) -> None:
    env = VitaBenchEnv(domain=domain)
    wins = 0
    for task_id in env.task_ids()[:6]:
        env.reset(options={"task_id": task_id})
        reward, terminated, info = play(env, env.oracle() + ["Done."])
        assert terminated
        assert info["vitabench_rubrics"]["scored"] is False and "unscored" in info["vitabench_rubrics"]["reason"]
        wins += info["won"]
        assert reward == float(info["won"])
    assert wins >= 5


def test_scripted_user_confirms_then_stops_and_doing_nothing_loses() -> None:
    env = VitaBenchEnv(domain="delivery")
    obs, _ = env.reset(options={"task_id": "10711001"})
    assert "rice noodles" in obs
    obs, reward, terminated, _, _ = env.step("Which restaurant would you like?")
    assert not terminated and "confirm" in obs.lower()
    _, reward, terminated, _, info = env.step("Sorry, I cannot help.")
    assert terminated and reward == 0.0
    assert info["vitabench_state"]["passed"] is False and info["vitabench_state"]["problems"]
    assert STOP in info["messages"][-1]["content"]


def test_wrong_product_loses() -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10711002"})
    task = env.tasks["10711002"]
    expected = task["evaluation_criteria"]["expected_states"][0]["required_orders"][0]
    store = task["environment"]["stores"][expected["store_id"]]
    other = next(p["product_id"] for p in store["products"] if p["product_id"] != expected["products"][0]["product_id"])
    obs, *_ = env.step(call("create_delivery_order", user_id=task["environment"]["user_id"], store_id=expected["store_id"],
                            product_ids=[other], product_cnts=[1], address=expected["location"]["address"],
                            dispatch_time=task["environment"]["time"]))
    new_id = env._vt.predict_id(1)
    assert f"Order(order_id:{new_id}, order_type:delivery" in obs
    reward, terminated, info = play(env, [call("pay_delivery_order", order_id=new_id), "Done.", "Done."])
    assert terminated and reward == 0.0


def test_episode_opens_as_upstreams_orchestrator() -> None:
    env = VitaBenchEnv(domain="delivery")
    obs, info = env.reset(options={"task_id": "10711001"})
    system, greeting, first = info["messages"][:3]
    assert greeting == {"role": "assistant", "content": "Hello, how can I help you?"} and first == {"role": "user", "content": obs}
    # 2025-06-21 is a Saturday; upstream's prompt carries the weekday and no user id
    assert "2025-06-21 11:20:00 Saturday" in system["content"] and "U000001" not in system["content"]
    assert "{time}" not in system["content"] and info["steps"] == 1


def test_scripted_user_gives_its_id_when_asked() -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10711001"})
    obs, _, terminated, _, _ = env.step("Could you tell me your user ID?")
    assert obs == "My user ID is U000001." and not terminated


def test_chinese_tasks_load_with_the_chinese_prompts(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from agentgym_suite.core.data import data_dir

    source = data_dir() / "vitabench"
    (tmp_path / "vitabench" / "domains" / "delivery").mkdir(parents=True)
    shutil.copytree(source / "prompts", tmp_path / "vitabench" / "prompts")
    tasks = json.loads((source / "domains" / "delivery" / "tasks_en.json").read_text(encoding="utf-8"))[:2]
    (tmp_path / "vitabench" / "domains" / "delivery" / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    env = VitaBenchEnv(domain="delivery", language="chinese")
    _, info = env.reset(options={"task_id": "10711001"})
    assert "2025-06-21 11:20:00 星期六" in info["messages"][0]["content"]
    assert info["messages"][1] == {"role": "assistant", "content": "你好，请问需要什么服务？"}
    obs, *_ = env.step(call("get_holiday_date", year="2025", holiday_name="中秋"))
    assert "2025-10-06" in obs


def test_step_limit_counts_upstreams_steps_and_scores_zero() -> None:
    env = VitaBenchEnv(domain="delivery", max_steps=4)  # user 1, agent 2, tool results 3, agent 4: stop before answering
    env.reset(options={"task_id": "10711001"})
    calls = env.oracle()[0]
    _, _, terminated, _, info = env.step(calls)
    assert not terminated and info["steps"] == 3
    _, reward, terminated, _, info = env.step(calls)
    assert terminated and reward == 0.0 and info["termination"] == "max_steps" and info["steps"] == 4
    assert info["messages"][-1]["role"] == "assistant"  # its calls were not run
    assert env.max_errors == 10  # declared as upstream, never counted (upstream never counts errors)


def test_leaderboard_departures_name_the_scorer_and_the_user() -> None:
    reasons = VitaBenchEnv(domain="delivery").leaderboard_departures()
    assert len(reasons) == 2 and "state check" in reasons[0] and "scripted user" in reasons[1]
    assert VitaBenchEnv(domain="delivery", judge=lambda m: "x", user=lambda m: "hi").leaderboard_departures() == []


def test_chinese_tasks_missing_say_what_to_place(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "vitabench" / "domains" / "delivery").mkdir(parents=True)
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"data/vita/domains/delivery/tasks\.json"):
        VitaBenchEnv(domain="delivery", language="chinese")
    with pytest.raises(ValueError, match="language"):
        VitaBenchEnv(domain="delivery", language="french")


def test_rubric_judge_scores_with_the_benchmark_template_in_sliding_windows() -> None:
    # upstream: vita.evaluator.evaluator_traj.TrajectoryEvaluator.calculate_reward (windows of 10, overlap 2;
    # rubrics = state rubrics then overall rubrics; reward 1 only when every rubric ends met)
    prompts: list[list[dict]] = []

    def judge_all_met(messages: list[dict]) -> str:
        prompts.append(messages)
        current = json.loads(messages[1]["content"].split("<current_rubrics>")[1].split("</current_rubrics>")[0])
        return "```json\n" + json.dumps([{**r, "meetExpectation": True, "justification": "done [1]"} for r in current]) + "\n```"

    env = VitaBenchEnv(domain="delivery", judge=judge_all_met)
    env.reset(options={"task_id": "10711001"})
    reward, _, info = play(env, env.oracle() + ["Done."])
    task = env.tasks["10711001"]["evaluation_criteria"]
    rubrics = [r for s in task["expected_states"] for r in s.get("state_rubrics", [])] + task["overall_rubrics"]
    assert info["scoring"] == "rubric_judge" and info["scorable"] and reward == 1.0
    assert info["vitabench_rubrics"]["rubrics"] == list(dict.fromkeys(rubrics)) and all(info["vitabench_rubrics"]["passed"])
    system, user = prompts[0][0]["content"], prompts[0][1]["content"]
    assert "sliding window" in system and "window 1 (out of" in system and "system_time" in system
    assert "<window_content>" in user and "[1] assistant: Hello, how can I help you?\n[2] user:" in user and "create_delivery_order(" in "".join(p[1]["content"] for p in prompts)
    conversation = [m for m in info["messages"] if m["role"] != "system"]
    assert len(prompts) == info["vitabench_rubrics"]["windows"] == len(sliding_windows(conversation))

    env = VitaBenchEnv(domain="delivery", judge=lambda m: "I refuse")  # unreadable replies keep every rubric unmet
    env.reset(options={"task_id": "10711001"})
    reward, _, info = play(env, env.oracle() + ["Done."])
    assert info["scorable"] and reward == 0.0 and "could not be read" in info["vitabench_rubrics"]["reason"]
    assert info["vitabench_state"]["passed"] is True  # the state check is still reported

    def broken(messages: list[dict]) -> str:
        raise RuntimeError("judge down")

    env = VitaBenchEnv(domain="delivery", judge=broken)
    env.reset(options={"task_id": "10711001"})
    reward, _, info = play(env, env.oracle() + ["Done."])
    assert info["scorable"] is False and reward == 0.0 and "judge down" in info["vitabench_rubrics"]["reason"]


def test_without_a_judge_the_state_check_scores_and_says_so() -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10711001"})
    reward, _, info = play(env, env.oracle() + ["Done."])
    assert info["scoring"] == "state_check" and info["judge"] == "none" and info["user_simulator"] == "scripted"
    assert reward == 1.0 and info["scorable"]


def test_llm_user_callable() -> None:
    seen: list[list[dict]] = []

    def chat(messages: list[dict]) -> str:
        seen.append(messages)
        return "I want noodles." if len(seen) == 1 else f"Bye {STOP}"

    env = VitaBenchEnv(domain="delivery", user=chat)
    obs, _ = env.reset(options={"task_id": "10711001"})
    assert obs == "I want noodles." and "rice noodles" in seen[0][0]["content"]
    _, _, terminated, _, _ = env.step("What kind?")
    assert terminated and seen[1][-1] == {"role": "user", "content": "What kind?"}
    assert isinstance(LLMUser(chat, "{persona}{instructions}"), LLMUser)


def test_unparsable_call_is_an_invalid_action() -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10716001"})
    obs, _, terminated, _, info = env.step("<tool_call>{bad json</tool_call>")
    assert "not valid JSON" in obs and info["action_valid"] is False and not terminated


@pytest.mark.parametrize(
    "action, answer",
    [  # upstream sends calls to its tools unchecked and answers failures with "Error: ..."
        (call("drop_database"), "Error: Tool 'drop_database' not found."),
        (call("pay_delivery_order", order_id=7), "Error: Order 7 not found"),
        (call("create_delivery_order", store_id="x"),
         "Error: DeliveryTools.create_delivery_order() missing 5 required positional arguments: "
         "'user_id', 'product_ids', 'product_cnts', 'address', and 'dispatch_time'"),
        (call("search_delivery_orders", user_id="U999999"), "User ID does not match"),
    ],
)
def test_bad_calls_are_answered_as_upstream(action: str, answer: str) -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10716001"})
    before = json.dumps(env._vt.db, sort_keys=True)
    _, _, terminated, _, info = env.step(action)
    assert info["messages"][-1] == {"role": "tool", "tool_call_id": info["messages"][-1]["tool_call_id"], "name": json.loads(
        action.removeprefix("<tool_call>").removesuffix("</tool_call>"))["name"], "content": answer}
    assert info["action_valid"] is ("drop_database" not in action) and not terminated  # a call to no tool is malformed
    assert json.dumps(env._vt.db, sort_keys=True) == before


def test_injection_string_is_inert_and_tool_errors_explained() -> None:
    env = VitaBenchEnv(domain="delivery")
    env.reset(options={"task_id": "10716001"})
    obs, _, _, _, info = env.step(call("get_delivery_order_detail", order_id="__import__('os').system('ls')"))
    assert info["action_valid"] is True and "Error: Order __import__('os').system('ls') not found" in obs
    paid = next(k for k, o in env.tasks["10716001"]["environment"]["orders"].items() if o["status"] == "paid")
    obs, *_ = env.step(call("pay_delivery_order", order_id=paid))
    assert "Order is not in `unpaid` status." in obs


@pytest.mark.parametrize("action", ["", "z" * 300_000])
def test_empty_and_huge(action: str) -> None:
    env = VitaBenchEnv(domain="instore")
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and not terminated


def test_unknown_task_and_missing_data(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownTaskError):
        VitaBenchEnv(domain="delivery").reset(options={"task_id": "nope"})
    with pytest.raises(ValueError):
        VitaBenchEnv(domain="ota")
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError):
        VitaBenchEnv(domain="delivery")


def test_judge_backend_spec_runs_the_model_and_labels_the_result() -> None:
    env = VitaBenchEnv(domain="delivery", judge="tiny")  # the random test model cannot answer in the format: all rubrics unmet
    env.judge.max_new_tokens = 16
    env.reset(options={"task_id": "10711001"})
    reward, _, info = play(env, env.oracle() + ["Done."])
    assert info["judge"] == "llm:tiny" and info["scoring"] == "rubric_judge" and info["scorable"] is True
    assert reward == 0.0 and info["vitabench_rubrics"]["passed"] and not any(info["vitabench_rubrics"]["passed"])


def test_state_check_accepts_one_instore_order_per_product() -> None:
    from agentgym_suite.envs.vitabench.scoring import check_state

    expected = {"required_orders": [{"order_id": "T1", "store_id": "S1", "status": "paid",
                                     "products": [{"product_id": "P1", "quantity": 1}, {"product_id": "P2", "quantity": 3}]}]}

    def order(pid: str, qty: int, store: str = "S1", status: str = "paid") -> dict:
        return {"store_id": store, "status": status, "products": [{"product_id": pid, "quantity": qty}]}

    initial: dict = {"orders": {}}
    assert check_state(expected, initial, {"orders": {"a": order("P1", 1), "b": order("P2", 3)}}) == (True, [])
    for final in ({"orders": {"a": order("P1", 1)}}, {"orders": {"a": order("P1", 1), "b": order("P2", 2)}},
                  {"orders": {"a": order("P1", 1), "b": order("P2", 3, store="S2")}},
                  {"orders": {"a": order("P1", 1), "b": order("P2", 3, status="unpaid")}}):
        assert check_state(expected, initial, final)[0] is False

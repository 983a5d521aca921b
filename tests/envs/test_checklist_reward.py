"""Per-turn checklists of SyntheticTools-v0 and the rehearsal env's deterministic checklist reward."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.methods.envace import RehearsalEnv, format_execution_result
from agentgym_suite.envs.shared.checklists import (
    ChecklistJudge,
    judge_prompt,
    max_episode_score,
    messages_str,
    parse_verdict,
    score_turn,
)
from agentgym_suite.envs.shared.canonical_json import canonical
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.envs.synthetic_tools import SyntheticToolsEnv

from .oracle import step_through


def _recorded_world(env: RehearsalEnv) -> ScriptedBackend:
    """A simulator answering each call with the result recorded for it (a faithful world for the gold calls)."""
    def answer(name: str, arguments: dict[str, Any]) -> str:
        for example in env.env.recorded_examples():
            if example["name"] == name and canonical(example["arguments"]) == canonical(arguments):
                return format_execution_result(example["result"] if example["result"] else {"ok": True})
        return format_execution_result({"ok": True})
    return ScriptedBackend(answer)


def _rehearsal(**base: Any) -> RehearsalEnv:
    env = RehearsalEnv(world_model="policy", base_env_kwargs={"seed": 0, **base})
    env.set_world_model(_recorded_world(env))
    return env


def test_generated_checklists_have_the_published_layout_and_sum_to_one() -> None:
    env = SyntheticToolsEnv(seed=0, user_turns=2, task_length=4)
    env.reset(options={"task_id": "w0-t0"})
    [checklist] = env.checklists()
    assert len(checklist) == 2
    gold = env.gold_calls()
    for turn in checklist:
        assert abs(sum(s["weight"] for s in turn) - 1.0) < 1e-6
        for standard in turn:
            assert {"question", "focus_on", "pass_condition", "failure_examples", "evidence", "weight",
                    "required_for_next_turn", "check"} <= set(standard)
        calls = [s["check"]["call"] for s in turn if "call" in s["check"]]
        assert calls and all((c["name"], c["arguments"]) in gold for c in calls)
        assert turn[-1]["check"] == {"reply": True} and not turn[-1]["required_for_next_turn"]


def test_multi_turn_task_oracle_wins_in_the_real_env() -> None:
    env = SyntheticToolsEnv(seed=0, user_turns=2, task_length=4)
    env.reset(options={"task_id": "w1-t2"})
    plan = env.oracle()
    replies = [a for a in plan if "<tool_call>" not in a]
    assert len(replies) == 2  # one text reply closes each user turn
    won, users = False, 1
    for action in plan:
        obs, _, terminated, _, info = env.step(action)
        won = bool(info["won"])
        if "<tool_call>" not in action and not terminated:
            users += 1
            assert obs.startswith("Thanks. Next, please")
    assert terminated and won and users == 2


@pytest.mark.parametrize("turns", [1, 2])
def test_oracle_in_a_faithful_world_earns_the_full_checklist_reward(turns: int) -> None:
    env = _rehearsal(user_turns=turns, task_length=4)
    env.reset(options={"task_id": "w0-t1"})
    assert env.reward_mode == "checklist"
    reward, terminated, won, info = step_through(env, env.oracle())
    assert terminated and won and reward == pytest.approx(1.0)
    assert info["checklist_turn_scores"] == pytest.approx([1.0] * turns)
    assert not undocumented_keys(info, env)


def test_checklist_reward_is_deterministic_and_partial() -> None:
    env = _rehearsal(task_length=4)
    env.reset(options={"task_id": "w0-t1"})
    plan = env.oracle()
    calls = [a for a in plan if "<tool_call>" in a]
    skipped = calls[:-1] + [plan[-1]]  # the last change is never made
    rewards = []
    for _ in range(2):
        env.reset(options={"task_id": "w0-t1"})
        reward, terminated, won, _ = step_through(env, skipped)
        rewards.append(reward)
        assert terminated and not won
    [checklist] = env.env.checklists()
    n = len(checklist[0])
    assert rewards[0] == rewards[1] == pytest.approx(1.0 - 1.0 / n)


def test_unmet_required_standard_stops_before_the_next_turn() -> None:
    env = _rehearsal(user_turns=2, task_length=4)
    env.reset(options={"task_id": "w0-t1"})
    reward, terminated, won, info = step_through(env, ["I could not do it."])
    assert terminated and not won
    [checklist] = env.env.checklists()
    reply_weight = checklist[0][-1]["weight"]
    assert info["checklist_turn_scores"] == pytest.approx([reply_weight])
    assert reward == pytest.approx(reply_weight / 2)  # sum of turn scores / (checklists x turns)


def test_a_failed_tool_result_voids_the_tool_standard() -> None:
    checklist = [[[{"focus_on": "assistant.tool_calls", "weight": 1.0, "check": {"call": {"name": "f", "arguments": {"x": 1}}}}]]]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": json.dumps({"x": 1})}}
    base = [{"role": "user", "content": "do f"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    ok = base + [{"role": "tool", "name": "f", "content": json.dumps({"done": True})}]
    failed = base + [{"role": "tool", "name": "f", "content": json.dumps({"error_tool_call": {"code": "X"}})}]
    assert score_turn(ok, checklist, 0).score == 1.0
    assert score_turn(failed, checklist, 0).score == 0.0
    assert max_episode_score(checklist) == 1.0


def test_judge_gets_the_released_prompt_and_its_json_verdict_counts() -> None:
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return json.dumps({"high_level_understanding_of_the_question": "", "analysis_of_if_focus_on": "",
                           "analysis_of_pass_condition": "", "analysis_of_failure_examples": "",
                           "answer": "weather" in prompt.split("# Current Messages to Evaluate")[1]})

    standard = {"question": "Does it mention the weather?", "focus_on": "assistant.content", "pass_condition": "it does",
                "failure_examples": ["no weather"], "evidence": [{"snippet": "sunny"}], "weight": 1.0,
                "required_for_next_turn": False}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "The weather is sunny."}]
    scored = score_turn(messages, [[[standard]]], 0, ChecklistJudge(judge))
    assert scored.score == 1.0 and len(seen) == 1
    assert "**Pass condition:** it does" in seen[0] and "content.user_visible_reply: None" in seen[0]
    assert score_turn([messages[0], {"role": "assistant", "content": "Hello."}], [[[standard]]], 0, ChecklistJudge(judge)).score == 0.0
    assert parse_verdict("not json") is False and parse_verdict('{"answer": "true"}') is False
    assert "# Turn: 0" in messages_str(messages) and "Reference snippet" in judge_prompt("", "", standard)


def test_the_judge_is_never_the_policy() -> None:
    with pytest.raises(ValueError, match="never the policy"):
        ChecklistJudge("policy")
    with pytest.raises(ValueError, match="never the policy"):
        RehearsalEnv(world_model="policy", judge="policy")
    with pytest.raises(ValueError, match="judge="):
        RehearsalEnv(world_model="tiny", reward_mode="judge")


def test_text_nested_too_deep_to_parse_is_no_verdict_and_no_error_result() -> None:
    from agentgym_suite.envs.shared.checklists import Step, _calls, _result_is_error, parse_verdict

    deep = "[" * 100_000 + "]" * 100_000
    assert parse_verdict('{"answer": ' + deep + "}") is False
    assert _result_is_error(deep) is False
    assert _calls({"tool_calls": [{"function": {"name": "f", "arguments": deep}}]}) == [("f", deep)]
    assert Step(1, {"role": "assistant"}, [{"role": "tool", "content": deep}]).tool_failed is False

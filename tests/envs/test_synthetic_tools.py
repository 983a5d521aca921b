"""SyntheticTools-v0: check_env, oracle replay over many seeds, knobs, determinism, bad actions."""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite.registration  # noqa: F401  (registers the ids)
from agentgym_suite.core.errors import UnknownTaskError
from agentgym_suite.envs.synthetic_tools import SyntheticToolsEnv, generate_world
from agentgym_suite.envs.synthetic_tools.generator import Knobs

from .oracle import play_oracle

agentgym_suite.registration.register_all()


def test_check_env() -> None:
    env = gymnasium.make("SyntheticTools-v0", num_worlds=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


def _seed_sweep(seeds: range) -> None:
    for seed in seeds:
        env = SyntheticToolsEnv(seed=seed, num_worlds=1, tasks_per_world=2)
        for task_id in env.task_ids():
            run = play_oracle(env, task_id, max_steps=40)
            assert run.reward == 1.0 and run.info["won"] and run.info["score"] == 1.0, (seed, task_id)


def test_oracle_wins_on_ten_seeds() -> None:
    _seed_sweep(range(10))


@pytest.mark.slow
def test_oracle_wins_on_hundred_seeds() -> None:
    _seed_sweep(range(100))


@pytest.mark.parametrize("knobs", [
    dict(num_tools=5, task_length=1, distractors=0, partial_observability=False),
    dict(num_tools=15, task_length=8, distractors=6, partial_observability=True),
    dict(num_tools=10, task_length=4, distractors=3, partial_observability=False),
])
def test_knobs_shape_worlds_and_stay_solvable(knobs: dict) -> None:
    env = SyntheticToolsEnv(seed=7, num_worlds=2, tasks_per_world=2, **knobs)
    obs, info = env.reset(options={"task_id": "w1-t1"})
    assert len(info["tools"]) == knobs["num_tools"] + knobs["distractors"]
    assert len(env.gold_calls()) >= knobs["task_length"]
    if knobs["partial_observability"]:
        assert "(id " not in obs
    else:
        assert not any(name.startswith("search_") for name, _ in env.gold_calls())
    for task_id in env.task_ids():
        assert play_oracle(env, task_id, max_steps=40).reward == 1.0


def test_partial_observability_hides_ids_and_gold_searches_first() -> None:
    env = SyntheticToolsEnv(seed=11, num_worlds=4, task_length=4)
    for task_id in env.task_ids()[:10]:
        obs, _ = env.reset(options={"task_id": task_id})
        gold = env.gold_calls()
        world_ids = set(env.world(int(task_id[1:].split("-")[0])).db["items"])
        assert not any(i in obs for i in world_ids)
        for k, (name, args) in enumerate(gold):  # any pre-existing id used was found by an earlier search
            used = {v for v in args.values() if isinstance(v, str) and v in world_ids}
            if used:
                earlier = json.dumps([e["result"] for e in env.recorded_examples()[:k]])
                assert all(u in earlier for u in used), (task_id, name)


def test_many_distinct_worlds() -> None:
    knobs = Knobs()
    worlds = [generate_world(0, i, knobs) for i in range(30)]
    themes = {w.theme.system for w in worlds}
    names = {tuple(sorted(r["name"] for r in w.db["items"].values())) for w in worlds}
    assert len(themes) >= 5 and len(names) == 30


def test_same_seed_same_episode_and_different_seed_differs() -> None:
    a, b, c = SyntheticToolsEnv(seed=5), SyntheticToolsEnv(seed=5), SyntheticToolsEnv(seed=6)
    oa, ia = a.reset(seed=123)
    ob, ib = b.reset(seed=123)
    assert oa == ob and ia["tools"] == ib["tools"] and a.oracle() == b.oracle()
    oc, _ = c.reset(options={"task_id": ia["task_id"]})
    assert oc != oa


def test_text_reply_ends_and_scores_unfinished_task_zero_then_partial() -> None:
    env = SyntheticToolsEnv(seed=2, task_length=4)
    env.reset(options={"task_id": "w0-t0"})
    _, reward, done, _, info = env.step("I am done.")
    assert done and reward < 1.0 and not info["won"]
    env.reset(options={"task_id": "w0-t0"})
    plan = env.oracle()[:-1]
    for action in plan[:-1]:
        env.step(action)
    _, reward, done, _, info = env.step("Finished.")
    assert done and not info["won"] and 0.0 <= reward < 1.0


def test_end_on_goal_ends_on_the_last_gold_call() -> None:
    env = SyntheticToolsEnv(seed=4, end_on_goal=True)
    env.reset(options={"task_id": "w0-t2"})
    done, steps = False, 0
    while not done:
        _, reward, done, _, info = env.step(env.oracle()[0])
        steps += 1
    assert info["won"] and reward == 1.0 and steps == len(env.gold_calls())


def test_recorded_examples_and_success_check() -> None:
    env = SyntheticToolsEnv(seed=9)
    env.reset(options={"task_id": "w3-t1"})
    examples = env.recorded_examples()
    assert [(e["name"], e["arguments"]) for e in examples] == env.gold_calls()
    assert all("result" in e for e in examples)
    assert not env.check_success(env.database())
    assert env.check_success(env.goal_db())


@pytest.mark.parametrize("action,needle", [
    ("<tool_call>{not json}</tool_call>", "INVALID_TOOL_CALL_FORMAT"),
    ('<tool_call>{"name": "launch_rockets", "arguments": {}}</tool_call>', "TOOL_NOT_AVAILABLE"),
    ("<tool_call>{\"name\": \"%s\", \"arguments\": {\"query\": 5}}</tool_call>", "INVALID_PARAMETERS"),
    ("<tool_call>" + "x" * 9000 + "</tool_call>", "characters long"),
    ("", "empty"),
    ("   ", "empty"),
])
def test_bad_actions_are_invalid_with_explanation(action: str, needle: str) -> None:
    env = SyntheticToolsEnv(seed=1)
    _, info = env.reset(options={"task_id": "w0-t0"})
    search = next(t["function"]["name"] for t in info["tools"] if t["function"]["name"].startswith("search_"))
    if "%s" in action:
        action = action % search
    obs, reward, done, _, info = env.step(action)
    assert info["action_valid"] is False and not done and reward == 0.0
    assert needle in obs


def test_tool_refusal_is_a_valid_action_with_an_error_result() -> None:
    env = SyntheticToolsEnv(seed=1)
    _, info = env.reset(options={"task_id": "w0-t0"})
    get = next(t["function"] for t in info["tools"] if t["function"]["name"].startswith("get_") and "id" in json.dumps(t))
    arg = next(iter(get["parameters"]["properties"]))
    obs, _, done, _, info = env.step(f'<tool_call>{{"name": "{get["name"]}", "arguments": {{"{arg}": "nope-0"}}}}</tool_call>')
    assert info["action_valid"] and not done and "TOOL_EXECUTION_ERROR" in obs


def test_unknown_task_id() -> None:
    env = SyntheticToolsEnv(num_worlds=2)
    with pytest.raises(UnknownTaskError, match="Unknown task id 'w0-t99'"):
        env.reset(options={"task_id": "w0-t99"})


def test_bad_knobs_raise_with_fix() -> None:
    with pytest.raises(ValueError, match="num_tools"):
        SyntheticToolsEnv(num_tools=40)
    with pytest.raises(ValueError, match="task_length"):
        SyntheticToolsEnv(task_length=0)

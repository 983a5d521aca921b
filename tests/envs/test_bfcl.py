"""BFCL-v0: check_env, oracle replay per category, scoring and bad actions."""

from __future__ import annotations

import json
import warnings

import gymnasium
import pytest

pytest.importorskip("bfcl_eval")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import agentgym_suite.registration  # noqa: E402,F401
from agentgym_suite.core.errors import BackendNotInstalledError, UnknownTaskError  # noqa: E402
from agentgym_suite.core.tool_calls import TOOL_CALL_BLOCK  # noqa: E402
from agentgym_suite.envs.bfcl import BFCLEnv, data  # noqa: E402
from agentgym_suite.envs.bfcl.call_strings import CallStringError, parse_call_string  # noqa: E402

MULTI = ["base", "miss_func", "miss_param", "long_context"]
SINGLE = ["simple", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
          "live_parallel", "live_parallel_multiple", "irrelevance", "live_irrelevance", "live_relevance"]


def play(env: BFCLEnv, actions: list[str]) -> dict:
    info: dict = {}
    for action in actions:
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    return info


@pytest.mark.parametrize("category", ["base", "miss_func", "simple", "irrelevance"])
def test_check_env(category: str) -> None:
    env = BFCLEnv(category=category)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


def test_registered_id() -> None:
    env = gymnasium.make("BFCL-v0", category="simple")
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and info["tools"]
    env.close()


@pytest.mark.parametrize("style", ["fc", "prompting"])
@pytest.mark.parametrize("category", MULTI)
def test_multi_turn_oracle_wins(category: str, style: str) -> None:
    env = BFCLEnv(category=category, system_prompt=style)
    for task_id in env.task_ids()[:4]:
        env.reset(options={"task_id": task_id})
        info = play(env, env.oracle())
        assert info["won"], (task_id, info["bfcl_turn_checks"])
        assert len(info["bfcl_turn_checks"]) == len(env._entry["question"])


@pytest.mark.parametrize("style", ["fc", "prompting"])
@pytest.mark.parametrize("category", SINGLE)
def test_single_turn_oracle_wins(category: str, style: str) -> None:
    env = BFCLEnv(category=category, system_prompt=style)
    for task_id in env.task_ids()[:5]:
        env.reset(options={"task_id": task_id})
        info = play(env, env.oracle())
        assert info["won"] and info["score"] == 1.0, (task_id, info.get("bfcl_check"))
        assert env._finished


def test_miss_func_reveals_held_out_functions() -> None:
    env = BFCLEnv(category="miss_func")
    _, info = env.reset(options={"task_id": "multi_turn_miss_func_0"})
    names = {t["function"]["name"] for t in info["tools"]}
    assert "sort" not in names
    actions = env.oracle()
    info = play(env, actions[:5])  # turns 0-2 done (calls + text, calls + text, text)
    assert info["bfcl_turn"] == 3
    assert "sort" in {t["function"]["name"] for t in info["tools"]}
    assert "more functions" in info["messages"][-1]["content"].lower()


REFUSED = [  # well-formed calls the file system refuses without changing anything
    ("cd", {"folder": "../../../../etc"}),
    ("cd", {"folder": "no_such_dir"}),
    ("cat", {"file_name": "../../etc/passwd"}),
]


def _blocks(action: str) -> list[str]:
    """The ``<tool_call>`` blocks of a message, one message each."""
    return [f"<tool_call>{body}</tool_call>" for body in TOOL_CALL_BLOCK.findall(action)]


@pytest.mark.parametrize("gold_first", [0, 1, 2])
@pytest.mark.parametrize("category", MULTI)
def test_oracle_keeps_the_turn_plan_after_refused_calls(category: str, gold_first: int) -> None:
    """After a valid call the backend refused (``cd`` out of the sandbox) the oracle once answered
    only "I have finished this request.", dropping the turn's gold calls, and lost the turn."""
    env = BFCLEnv(category=category)
    for task_id in env.task_ids()[:6]:
        _, info = env.reset(options={"task_id": task_id})
        tools = {t["function"]["name"] for t in info["tools"]}
        refused = [f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in REFUSED if n in tools]
        assert refused, task_id
        gold = _blocks(env.oracle()[0])
        for block in gold[:gold_first]:  # some of the turn's gold calls made one by one first
            env.step(block)
        for action in refused:
            obs, _, terminated, _, info = env.step(action)
            assert "error" in obs and info["action_valid"] and not terminated
        assert _blocks(env.oracle()[0]) == gold[gold_first:]
        info = play(env, env.oracle())
        assert info["won"], (task_id, [c for c in info["bfcl_turn_checks"] if not c["passed"]][:1])


def test_wrong_calls_lose_multi_turn() -> None:
    env = BFCLEnv(category="base")
    env.reset(options={"task_id": "multi_turn_base_0"})
    info = play(env, ["I cannot help."] * 10)
    assert info["won"] is False and info["score"] == 0.0
    assert not info["bfcl_turn_checks"][0]["passed"]


def test_wrong_value_loses_single_turn() -> None:
    env = BFCLEnv(category="simple")
    env.reset(options={"task_id": "simple_python_0"})
    call = {"name": "calculate_triangle_area", "arguments": {"base": 11, "height": 5}}
    _, reward, terminated, _, info = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert terminated and reward == 0.0 and not info["won"]
    assert "base" in info["bfcl_check"]["reason"]


def test_string_normalisation_and_int_for_float() -> None:
    env = BFCLEnv(category="simple")
    env.reset(options={"task_id": "simple_python_0"})
    call = {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5, "unit": "Units"}}
    _, reward, _, _, info = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert reward == 1.0, info["bfcl_check"]


def test_irrelevance_call_loses() -> None:
    env = BFCLEnv(category="irrelevance")
    env.reset(options={"task_id": "irrelevance_0"})
    call = {"name": "determine_body_mass_index", "arguments": {"weight": 70.0, "height": 1.8}}
    _, reward, terminated, _, _ = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert terminated and reward == 0.0


@pytest.mark.parametrize(
    "action, fragment",
    [
        ("<tool_call>{not json}</tool_call>", "not valid JSON"),
        # an unknown name gets bfcl-eval's executor's NameError text, as its eval of the execution string gives it
        ('<tool_call>{"name": "rm_rf_everything", "arguments": {}}</tool_call>', "name 'rm_rf_everything' is not defined"),
        ('<tool_call>{"name": "_load_scenario", "arguments": {"scenario": {}}}</tool_call>', "name '_load_scenario' is not defined"),
        ('<tool_call>{"name": "print", "arguments": {}}</tool_call>', "no tool named"),  # a builtin: the suite's refusal
    ],
)
def test_bad_actions_are_explained_not_executed(action: str, fragment: str) -> None:
    env = BFCLEnv(category="base")
    env.reset(options={"task_id": "multi_turn_base_0"})
    before = env._model.state()
    obs, reward, terminated, _, info = env.step(action)
    assert info["action_valid"] is False
    assert fragment in obs
    assert not terminated and reward == 0.0
    assert env._model.state() == before


@pytest.mark.parametrize(
    "arguments, fragment",
    [({"folder": 5}, "Error during execution"), ({}, "missing 1 required positional argument")],
)
def test_known_function_runs_on_the_backend_whatever_its_arguments(arguments: dict, fragment: str) -> None:
    """bfcl-eval executes every decoded call: wrong arguments reach the backend, whose error is the result."""
    env = BFCLEnv(category="base")
    env.reset(options={"task_id": "multi_turn_base_0"})
    before = env._model.state()
    obs, reward, terminated, _, info = env.step(f'<tool_call>{json.dumps({"name": "cd", "arguments": arguments})}</tool_call>')
    assert fragment in obs and not terminated and reward == 0.0
    assert env._model.state() == before and env._turn_call_count == 1


def test_import_payload_is_just_a_string() -> None:
    env = BFCLEnv(category="base")
    env.reset(options={"task_id": "multi_turn_base_0"})
    payload = "__import__('os').system('touch /tmp/bfcl_pwned')"
    call = {"name": "cd", "arguments": {"folder": payload}}
    obs, _, _, _, info = env.step(f"<tool_call>{json.dumps(call)}</tool_call>")
    assert info["action_valid"] is True  # well-formed; the backend just finds no such folder
    assert "error" in obs.lower() or "no such" in obs.lower()
    with pytest.raises(CallStringError):
        parse_call_string(f"cd(folder={payload})")
    with pytest.raises(CallStringError):
        parse_call_string("__import__('os').system('ls')")


@pytest.mark.parametrize("action", ["", "   ", "x" * 300_000])
def test_empty_and_huge_messages(action: str) -> None:
    env = BFCLEnv(category="base")
    env.reset(options={"task_id": "multi_turn_base_0"})
    obs, _, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and not terminated and obs


def test_call_string_parsing() -> None:
    parsed = parse_call_string("mv(source='a.txt', destination=\"b\")")
    assert parsed.name == "mv" and parsed.kwargs == {"source": "a.txt", "destination": "b"}
    assert parse_call_string("sort('f.pdf')").args == ("f.pdf",)
    assert parse_call_string("f(x=-1.5, y=[1, (2, 3)], z=None)").kwargs == {"x": -1.5, "y": [1, (2, 3)], "z": None}
    for bad in ["os.system('ls')", "f(x=open('a'))", "f(**{'a': 1})", "f(", "f(x=y)"]:
        with pytest.raises(CallStringError):
            parse_call_string(bad)


def test_unknown_task_and_categories() -> None:
    env = BFCLEnv(category="simple")
    with pytest.raises(UnknownTaskError):
        env.reset(options={"task_id": "simple_python_99999"})
    with pytest.raises(ValueError, match="web_search_base"):
        BFCLEnv(category="web_search")
    with pytest.raises(ValueError):
        BFCLEnv(category="nonsense")


def test_missing_package_raises_with_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bfcl_eval" else real(name, *a))
    with pytest.raises(BackendNotInstalledError, match="--no-deps bfcl-eval"):
        BFCLEnv(category="simple")
    assert data.INSTALL_COMMAND.startswith("pip install --no-deps bfcl-eval==")


@pytest.mark.parametrize("reply", ["x" * 70_000, "\x00\x00"], ids=["over the length limit", "no visible text"])
def test_a_single_turn_entry_ends_after_its_one_response_whatever_it_holds(reply: str) -> None:
    """bfcl-eval scores the one response a single-turn entry gets: a refused reply fails the entry
    instead of earning a second turn."""
    env = BFCLEnv(category="simple")
    env.reset(options={"task_id": env.task_ids()[0]})
    _, reward, terminated, truncated, info = env.step(reply)
    assert terminated and not truncated and reward == 0.0 and not info["won"] and not info["action_valid"]
    assert info["bfcl_check"]["passed"] is False and info["bfcl_check"]["reason"]
    _, _, _, _, after = env.step(env.oracle()[0] if env.oracle() else "x")
    assert after["action_valid"] is False and "episode is over" in after["error"]


def test_the_reply_limit_follows_the_declared_token_budget() -> None:
    """bfcl-eval lets a model write 4096 tokens a step: a reply of 20,000 characters (over the suite's
    8,192-character default) is read, and one over 16 characters a token of that budget is refused."""
    from agentgym_suite.core.spaces import CHARS_PER_TOKEN_BOUND, MAX_ACTION_CHARS

    env = BFCLEnv(category="simple")
    budget = BFCLEnv.eval_sampling_defaults["max_new_tokens"]
    assert env.max_reply_chars == budget * CHARS_PER_TOKEN_BOUND > MAX_ACTION_CHARS
    assert env.action_space.max_length == env.max_reply_chars
    env.reset(options={"task_id": env.task_ids()[0]})
    long_call = env.oracle()[0] + "\n" + "I hope this helps. " * 1_000
    assert MAX_ACTION_CHARS < len(long_call) < env.max_reply_chars
    _, reward, terminated, _, info = env.step(long_call)
    assert terminated and info["action_valid"] and reward == 1.0


@pytest.mark.parametrize("reply", [
    "[cd(folder=__import__(name='os'))]",
    "[cd(folder=_load_scenario(scenario={'root': {}}))]",
    "[echo(content=\"__import__('os').system('touch /tmp/bfcl_pwned')\", file_name='t.txt')]",
])
def test_multi_turn_prompting_runs_nested_calls_only_on_backend_methods(reply: str) -> None:
    """Nested calls run through the backend's public methods, strings are read back as literals: no eval."""
    env = BFCLEnv(category="base", system_prompt="prompting")
    env.reset(options={"task_id": "multi_turn_base_0"})
    before = env._model.state()
    env.step(reply)
    assert env._model.state() == before and len(env._all_results) == 1
    assert env._all_results[0].startswith("Error during execution") or "No such file" in env._all_results[0]


BUILTIN_CALL = {"fc": '<tool_call>{"name": "print", "arguments": {"value": "x"}}</tool_call>',
                "prompting": "[print(value='x')]"}
"""A call to a Python builtin's name in each style: bfcl-eval's executor would call it, the suite refuses it."""


@pytest.mark.parametrize("category", ["base", "web_search_base"])
@pytest.mark.parametrize("style", ["fc", "prompting"])
def test_a_builtin_name_labels_only_the_episode_it_happens_in(style: str, category: str) -> None:
    from agentgym_suite.envs.bfcl.env import SUITE_REFUSAL_DEPARTURE

    env = BFCLEnv(category=category, system_prompt=style)
    assert SUITE_REFUSAL_DEPARTURE not in env.leaderboard_departures()
    task_id = env.task_ids()[0]
    env.reset(options={"task_id": task_id})
    obs, _, _, _, info = env.step(BUILTIN_CALL[style])
    assert "no tool named" in obs and info["departure_in_play"] == SUITE_REFUSAL_DEPARTURE
    info = play(env, env.oracle())
    assert info["departure_in_play"] == SUITE_REFUSAL_DEPARTURE  # the episode's last info keeps it
    _, info = env.reset(options={"task_id": task_id})
    assert "departure_in_play" not in info
    info = play(env, env.oracle())
    assert info["won"] and "departure_in_play" not in info  # an episode without it is comparable


@pytest.mark.parametrize("style", ["fc", "prompting"])
def test_an_unknown_name_is_upstreams_name_error_and_no_departure(style: str) -> None:
    env = BFCLEnv(category="base", system_prompt=style)
    env.reset(options={"task_id": "multi_turn_base_0"})
    reply = '<tool_call>{"name": "foo", "arguments": {}}</tool_call>' if style == "fc" else "[foo(x=1)]"
    obs, _, _, _, info = env.step(reply)
    assert "name 'foo' is not defined" in obs and "departure_in_play" not in info


def test_the_runner_adds_the_episode_departure_to_the_run() -> None:
    """``summary.json``'s ``leaderboard_departures`` (``run_departures``) gets the refusal from the episode
    that met it, and not from a clean one."""
    from types import SimpleNamespace

    from agentgym_suite.envs.bfcl.env import SUITE_REFUSAL_DEPARTURE
    from agentgym_suite.evaluation.runner import run_departures

    env = BFCLEnv(category="base", system_prompt="prompting")
    finals = []
    for actions in ([BUILTIN_CALL["prompting"]], []):
        env.reset(options={"task_id": "multi_turn_base_0"})
        info = play(env, actions + env.oracle())
        finals.append(SimpleNamespace(turns=[SimpleNamespace(info=info)]))
    config = {"leaderboard_departures": env.leaderboard_departures()}
    assert SUITE_REFUSAL_DEPARTURE in run_departures(finals, config)  # type: ignore[arg-type]
    assert SUITE_REFUSAL_DEPARTURE not in run_departures(finals[1:], config)  # type: ignore[arg-type]


def _oracle_won(env: BFCLEnv) -> set[str]:
    won = set()
    for task_id in env.task_ids():
        env.reset(options={"task_id": task_id})
        if play(env, env.oracle()).get("won"):
            won.add(task_id)
    return won


@pytest.mark.slow
@pytest.mark.parametrize("category", MULTI + SINGLE + ["simple_java", "simple_javascript", "web_search_base"])
def test_the_prompting_oracle_wins_every_entry_the_fc_oracle_wins(category: str) -> None:
    """The oracle writes call lists in prompting style and ``<tool_call>`` blocks otherwise: the same entries
    fall to both (those it loses in both, such as simple_java_36, _64 and _65, lose on the leaderboard too)."""
    fc, prompting = BFCLEnv(category=category), BFCLEnv(category=category, system_prompt="prompting")
    won = _oracle_won(fc)
    assert won and _oracle_won(prompting) == won


@pytest.mark.parametrize("category", ["simple", "base"])
def test_prompting_style_gives_the_model_no_tool_schemas(category: str) -> None:
    """bfcl-eval's prompting handlers describe the functions in the system prompt and pass no tools to the
    model: the env says so (``tools_in_prompt``) and an episode's prompt keeps no schemas for the chat
    template, while the env still knows its tools; in ``fc`` style the schemas go to the template."""
    from agentgym_suite.rollout.prompting import EpisodePrompt

    for style, expect_tools in (("prompting", False), ("fc", True)):
        env = BFCLEnv(category=category, system_prompt=style)
        obs, info = env.reset(seed=0)
        assert info["tools"], "the env keeps its tool list either way"
        assert (info.get("tools_in_prompt") is False) is (not expect_tools)
        prompt = EpisodePrompt("chat", env=env)
        prompt.start(obs, info)
        assert bool(prompt.tools) is expect_tools
        obs, _, _, _, info = env.step("no call here")
        prompt.record("no call here", obs, info)
        assert bool(prompt.tools) is expect_tools

"""Property-based tests of every action parser (extends tests/core/test_tool_calls.py, not repeats it).

* ``core.actions`` formats (plain / think_action / search): never raise; a valid parse has a
  clean command; well-formed actions round-trip;
* ``parse_tool_calls``: absurdly deep JSON nesting is an error result, not a RecursionError;
* WebShop's ``search[..]`` / ``click[..]`` commands on the real page engine;
* the rehearsal ``<execution_result>`` contract: never raises, formats round-trip;
* the τ² and VitaBench judge-reply readers: a reply they cannot read is no verdict, never a crash.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentgym_suite.core.actions import _CONTROL, MAX_COMMAND_CHARS, ParsedAction, get_action_format
from agentgym_suite.core.tool_calls import INVALID_TOOL_CALL_FORMAT, MAX_JSON_DEPTH, parse_tool_calls

TAGS = st.sampled_from(["<think>", "</think>", "<action>", "</action>", "<search>", "</search>", "<answer>",
                        "</answer>", "<", ">", "/", "\x00", "\x07", "\n", " ", "中", "look", "go north"])
RAW = st.one_of(st.text(max_size=300), st.lists(TAGS | st.text(max_size=5), max_size=20).map("".join))
COMMAND = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="<>"), min_size=1,
                  max_size=80).filter(lambda s: s.strip() == s and s)


@settings(max_examples=400, deadline=None)
@given(raw=RAW, name=st.sampled_from(["plain", "think_action", "search"]))
def test_action_formats_never_raise_and_valid_means_clean(raw: str, name: str) -> None:
    parsed = get_action_format(name).parse(raw)
    assert isinstance(parsed, ParsedAction)
    if parsed.valid:
        assert parsed.command and parsed.reason == ""
    else:
        assert parsed.reason, "an invalid action must say why"
    if parsed.command is not None:
        assert len(parsed.command) <= MAX_COMMAND_CHARS and not _CONTROL.search(parsed.command)
        assert parsed.command == parsed.command.strip()


@settings(max_examples=200, deadline=None)
@given(command=COMMAND, thought=st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters="<>"),
                                        max_size=40))
def test_well_formed_actions_round_trip(command: str, thought: str) -> None:
    assert get_action_format("plain").parse(f"  {command}\n") == ParsedAction(command, True, raw=f"  {command}\n")
    think = get_action_format("think_action").parse(f"<think>{thought}</think><action>{command}</action>")
    assert (think.command, think.valid) == (command, True)
    for tag in ("search", "answer"):
        parsed = get_action_format("search").parse(f"<{tag}>{command}</{tag}>")
        assert (parsed.command, parsed.kind, parsed.valid) == (command, tag, True)


@pytest.mark.parametrize("name", ["plain", "think_action", "search"])
def test_control_characters_empty_and_oversized_are_invalid(name: str) -> None:
    fmt = get_action_format(name)
    wrap = {"plain": "{}", "think_action": "<think>t</think><action>{}</action>", "search": "<search>{}</search>"}[name]
    for command in ("go\x00north", "look\x1b[2J", "", "x" * (MAX_COMMAND_CHARS + 1)):
        parsed = fmt.parse(wrap.format(command))
        assert not parsed.valid and parsed.command is None and parsed.reason


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5_000, 200_000])
def test_deeply_nested_tool_calls_are_errors_not_crashes(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    for text in (
        f'<tool_call>{{"name": "f", "arguments": {{"x": {nested}}}}}</tool_call>',
        f"<tool_call>{nested}</tool_call>",
        f'<tool_call>{{"name": "f", "arguments": {json.dumps(nested)}}}</tool_call>',
        '{"tool_calls": ' + nested + "}",
    ):
        parsed = parse_tool_calls(text)
        assert not parsed.calls
        assert all(e.code == INVALID_TOOL_CALL_FORMAT and "nested deeper" in e.message for e in parsed.errors)


def test_nesting_up_to_the_limit_is_accepted() -> None:
    inner = "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2)  # + the call object and its arguments
    parsed = parse_tool_calls(f'<tool_call>{{"name": "f", "arguments": {{"x": {inner}}}}}</tool_call>')
    assert len(parsed.calls) == 1 and not parsed.errors


# ---------------------------------------------------------------------------- WebShop
@pytest.fixture(scope="module")
def webshop(tmp_path_factory: pytest.TempPathFactory) -> object:
    from agentgym_suite.envs.webshop import WebShopEnv
    from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

    root = tmp_path_factory.mktemp("webshop")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENTGYM_CACHE", str(root / "cache"))
        env = WebShopEnv(data_dir=write_synthetic_catalogue(root / "data"))
        env.reset(options={"task_id": env.task_ids()[0]})
    return env


@settings(max_examples=300, deadline=None)
@given(verb=st.sampled_from(["search", "click", "Search", "buy", ""]),
       argument=st.text(max_size=60) | st.sampled_from(["", "]", "[", "back to search", "next >", "buy now"]),
       spaces=st.sampled_from(["", " ", "\n"]))
def test_webshop_commands_never_raise(webshop: object, verb: str, argument: str, spaces: str) -> None:
    env = webshop  # type: ignore[assignment]
    env.reset(options={"task_id": env.task_ids()[0]})  # type: ignore[attr-defined]
    observation, reward, terminated, truncated, info = env.step(f"{spaces}{verb}{spaces}[{argument}]{spaces}")  # type: ignore[attr-defined]
    assert isinstance(observation, str) and isinstance(info["action_valid"], bool)
    if verb not in ("search", "click"):
        assert info["action_valid"] is False


def test_webshop_admissible_search_is_valid(webshop: object) -> None:
    env = webshop  # type: ignore[assignment]
    env.reset(options={"task_id": env.task_ids()[0]})  # type: ignore[attr-defined]
    _, _, _, _, info = env.step("search[red shirt]")  # type: ignore[attr-defined]
    assert info["action_valid"] is True
    _, _, _, _, info = env.step("search[red shirt]")  # type: ignore[attr-defined]  # not on the search page any more
    assert info["action_valid"] is False


# ---------------------------------------------------------------------------- rehearsal contract
contract = pytest.importorskip("agentgym_suite.methods.envace.contract")
JSON_BODY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, min_size=1, max_size=3) | st.dictionaries(st.text(max_size=6), inner, min_size=1,
                                                                           max_size=3),
    max_leaves=8,
).filter(lambda v: isinstance(v, (dict, list)) and bool(v))


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.lists(st.sampled_from(
    ["<execution_result>", "</execution_result>", "<think>", "</think>", "\n", "{", "}", "[", "]", '"a"', ":", "1",
     "NaN", "Infinity", " "]), max_size=16).map("".join), st.sampled_from([None, 3, b"x", ["a"]])))
def test_execution_result_parser_never_raises(text: object) -> None:
    parsed = contract.parse_execution_result(text)
    assert isinstance(parsed.valid, bool)
    assert parsed.valid or parsed.reason


@settings(max_examples=200, deadline=None)
@given(value=JSON_BODY, thinking=st.none() | st.text(st.characters(min_codepoint=32, max_codepoint=126,
                                                                    exclude_characters="<>"), max_size=30))
def test_execution_result_round_trips(value: object, thinking: str | None) -> None:
    parsed = contract.parse_execution_result(contract.format_execution_result(value, thinking))
    assert parsed.valid and parsed.result == value


def test_deep_execution_result_is_invalid_not_a_crash() -> None:
    parsed = contract.parse_execution_result("<execution_result>\n" + "[" * 100_000 + "\n</execution_result>")
    assert not parsed.valid and "not valid JSON" in parsed.reason


# ---------------------------------------------------------------------------- judge replies
JUDGE_HOSTILE = ["[" * 100_000 + "]" * 100_000, '{"results": ' + "[" * 100_000 + "]" * 100_000 + "}",
                 '[{"state": ' + "9" * (4300 + 700) + "}]", '{"results": [{"metExpectation": ' + "7" * 5000 + "}]}",
                 "\x00" * 50, "\ud800", "```json\n" + "{" * 50_000 + "\n```"]


@pytest.mark.parametrize("reply", JUDGE_HOSTILE, ids=range(len(JUDGE_HOSTILE)))
def test_unreadable_judge_replies_are_no_verdict_not_a_crash(reply: str) -> None:
    """A judge model's reply is model output: nesting too deep for the JSON parser or a number over
    the digit limit reads as "no verdict" (the caller then marks the episode unjudged)."""
    from agentgym_suite.envs.tau2.nl_judge import parse_verdicts
    from agentgym_suite.envs.vitabench.rubric_judge import format_window, parse_states

    assert parse_states(reply) is None
    assert parse_verdicts(reply, 1) is None
    call = {"function": {"name": "order", "arguments": reply}}
    assert "order(" in format_window([{"role": "assistant", "content": "", "tool_calls": [call]}], 0)


@settings(max_examples=200, deadline=None)
@given(reply=RAW)
def test_judge_reply_parsers_never_raise(reply: str) -> None:
    from agentgym_suite.envs.tau2.nl_judge import parse_verdicts
    from agentgym_suite.envs.vitabench.rubric_judge import parse_states

    states = parse_states(reply)
    assert states is None or all(isinstance(s, dict) for s in states)
    verdicts = parse_verdicts(reply, 2)
    assert verdicts is None or (len(verdicts) == 2 and all(isinstance(v, bool) for v in verdicts))


# ---------------------------------------------------------------------------- BFCL prompting call lists
ATOMS = st.sampled_from(["1", "-2.5", "'s'", '"t u"', "True", "None", "...", "x", "b'x'", "1j", "-1j", "1e999",
                         "'\\ud800'", "{1, 2}", "{(1, 2): 3}", "{1: 2}", "f'{x}'", "lambda: 1", "[i for i in x]",
                         "1 < 2", "not x", "*x", "2**999999", "'a' * 10**9", "[1] * 10**9", "10**4300", "1/0",
                         "g(1)", "g(h=1)", "a[0]", "open('f')", "__import__('os')", "9" * 5000])
EXPRESSIONS = st.recursive(ATOMS, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
    st.lists(st.tuples(inner, inner), max_size=2).map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
    st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), inner).map(" ".join),
    inner.map(lambda x: f"g(h={x})"), inner.map(lambda x: f"-({x})"),
), max_leaves=8)
CALL_LISTS = st.lists(st.tuples(st.sampled_from(["f", "cd", "a.b", "x.y.z", "(f)", "f()"]),
                                st.lists(st.tuples(st.sampled_from(["a", "b", "folder", ""]), EXPRESSIONS), max_size=3)),
                      max_size=3).map(lambda calls: "[" + ", ".join(
                          f"{name}(" + ", ".join(f"{k}={v}" if k else v for k, v in args) + ")" for name, args in calls) + "]")
JSON_ARGUMENT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(CALL_LISTS, RAW, CALL_LISTS.map(lambda t: t[1:-1]), CALL_LISTS.map(lambda t: f"```python\n{t}\n```")))
def test_bfcl_prompting_decoder_never_raises_and_calls_are_json(text: str) -> None:
    """Whatever a prompting model writes, the decoder answers: a reply in words (None), or calls whose
    arguments are JSON, or errors that say why; never an exception, never a value JSON cannot carry."""
    from agentgym_suite.core.tool_calls import ToolCall, ToolCallError
    from agentgym_suite.envs.bfcl.upstream_decode import decode_prompting_reply

    decoded = decode_prompting_reply(text)
    for item in decoded.calls if decoded is not None else []:
        if isinstance(item, ToolCallError):
            assert item.message and item.code
            continue
        assert isinstance(item, ToolCall) and item.name
        encoded = json.dumps(item.arguments, ensure_ascii=False)
        assert json.loads(encoded) == json.loads(json.dumps(json.loads(encoded)))
        assert json.dumps(item.to_openai())  # what the env writes into info["messages"]


@settings(max_examples=300, deadline=None)
@given(value=JSON_ARGUMENT)
def test_bfcl_prompting_decoder_reads_python_literals_back(value: object) -> None:
    """A JSON value written as a Python literal (``repr``) comes back as the same argument."""
    from agentgym_suite.core.tool_calls import ToolCall
    from agentgym_suite.envs.bfcl.prompting_decoder import decode_call_list

    assert decode_call_list(f"[f(a={value!r})]") == [ToolCall("f", {"a": value}, id="call_0")]


@pytest.fixture(scope="module")
def bfcl_prompting() -> object:
    pytest.importorskip("bfcl_eval")
    from agentgym_suite.envs.bfcl import BFCLEnv

    return BFCLEnv(category="base", system_prompt="prompting")


@settings(max_examples=60, deadline=None)
@given(text=CALL_LISTS.map(lambda t: t.replace("(f)", "cd").replace("a.b", "ls")))
@example(text="[f(a=" + "9" * 70_000 + ")]")  # longer than any action: refused before it is parsed, still a step
def test_bfcl_prompting_env_steps_never_raise(bfcl_prompting: object, text: str) -> None:
    """The same call lists sent to BFCL-v0 in prompting style: an answer every time, and a call the
    decoder refused is an invalid action."""
    from agentgym_suite.core.tool_calls import ToolCallError
    from agentgym_suite.envs.bfcl.upstream_decode import decode_prompting_reply, execution_calls

    env = bfcl_prompting  # type: ignore[assignment]
    env.reset(options={"task_id": "multi_turn_base_0"})  # type: ignore[attr-defined]
    observation, _, _, _, info = env.step(text)  # type: ignore[attr-defined]
    assert isinstance(observation, str) and json.dumps(info["messages"])
    decoded = decode_prompting_reply(text)
    # a multi-turn entry runs the calls as bfcl-eval's executor does: its conversion decides which are errors
    executed = execution_calls(decoded) if decoded is not None else None
    if executed is not None and any(isinstance(call, ToolCallError) for call, _ in executed):
        assert info["action_valid"] is False

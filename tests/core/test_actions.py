"""Action formats: extraction and the validity rules of the seeds (verl-agent)."""

from __future__ import annotations

import pytest

from agentgym_suite.core.actions import (
    MAX_COMMAND_CHARS,
    PlainFormat,
    SearchFormat,
    ThinkActionFormat,
    encoding_problem,
    get_action_format,
    has_visible_text,
    unusable_action,
)

BAD_RAW = [
    "",
    "   \n\t ",
    "x" * 100_000,
    "go\x00 north\x07",
    "<action><action>go north</action></action>",
    "<action>go north",
    "go north</action>",
    "<action></action>",
]


def test_think_action_valid() -> None:
    parsed = ThinkActionFormat().parse("<think>the key is east</think>\n<action> go east </action>")
    assert parsed.valid and parsed.command == "go east" and parsed.think == "the key is east"


def test_missing_think_keeps_command_but_is_invalid() -> None:
    parsed = ThinkActionFormat().parse("<action>go east</action>")
    assert parsed.command == "go east"
    assert not parsed.valid
    assert "<think>" in parsed.reason


def test_cjk_text_is_invalid() -> None:
    parsed = ThinkActionFormat().parse("<think>向东走</think><action>go east</action>")
    assert parsed.command == "go east" and not parsed.valid
    assert "CJK" in parsed.reason


@pytest.mark.parametrize("raw", BAD_RAW)
def test_bad_actions_are_invalid_with_a_reason(raw: str) -> None:
    for fmt in (PlainFormat(), ThinkActionFormat(), SearchFormat()):
        parsed = fmt.parse(raw)
        assert not parsed.valid, (fmt.name, raw[:40])
        assert parsed.reason, (fmt.name, raw[:40])


def test_missing_action_tag_gives_no_command_and_a_verl_fallback() -> None:
    raw = "<think>hmm</think> I would like to open the fridge please"
    parsed = ThinkActionFormat().parse(raw)
    assert parsed.command is None and not parsed.valid
    assert parsed.fallback_command() == "e like to open the fridge please"[-30:]
    assert len(parsed.fallback_command()) == 30


def test_plain_rejects_overlong_commands() -> None:
    assert not PlainFormat().parse("a" * (MAX_COMMAND_CHARS + 1)).valid
    assert PlainFormat().parse("a" * MAX_COMMAND_CHARS).valid


def test_search_format() -> None:
    fmt = SearchFormat()
    search = fmt.parse("<think>need birthplace</think><search> Ada Lovelace birthplace </search>")
    assert search.valid and search.kind == "search" and search.command == "Ada Lovelace birthplace"
    answer = fmt.parse("<answer>London</answer>")
    assert answer.valid and answer.kind == "answer" and answer.command == "London"
    both = fmt.parse("<search>a</search><answer>b</answer>")
    assert not both.valid and "not both" in both.reason
    assert not SearchFormat(require_think=True).parse("<answer>x</answer>").valid


def test_unknown_format_name_lists_choices() -> None:
    with pytest.raises(ValueError, match="plain"):
        get_action_format("xml")


def test_non_string_action_is_invalid_not_an_exception() -> None:
    parsed = PlainFormat().parse(123)  # type: ignore[arg-type]
    assert not parsed.valid and "string" in parsed.reason


INVISIBLE = ["\x00", "\x00" * 40, "\x00 \n\x00\t", "\x1b\x07\x7f", "\u200b\u200b", "\ufeff", "\u2028 \u00a0", "\x00\u200d\x1b"]


@pytest.mark.parametrize("raw", INVISIBLE)
@pytest.mark.parametrize("name", ["plain", "think_action", "search"])
def test_text_without_a_visible_character_is_invalid(raw: str, name: str) -> None:
    assert not has_visible_text(raw)
    parsed = get_action_format(name).parse(raw)
    assert not parsed.valid and parsed.command is None and parsed.reason


@pytest.mark.parametrize("raw", INVISIBLE)
def test_messages_without_a_visible_character_are_unusable(raw: str) -> None:
    parsed = unusable_action(raw, noun="message")
    assert parsed is not None and not parsed.valid and "message" in parsed.reason


@pytest.mark.parametrize("raw", ["a", "\x00a\x00", "中", "\u200bé", "🙂", "<tool_call>"])
def test_one_visible_character_is_enough(raw: str) -> None:
    assert has_visible_text(raw)


@pytest.mark.parametrize("raw", ["go \ud800 north", "\udfff", "look\udc80"])
def test_text_that_cannot_be_encoded_is_invalid(raw: str) -> None:
    assert "lone surrogate" in encoding_problem(raw)
    for name in ("plain", "think_action", "search"):
        parsed = get_action_format(name).parse(raw)
        assert not parsed.valid and parsed.command is None and "surrogate" in parsed.reason
    assert encoding_problem("go \U0001F600 north") == ""

"""Prompt rendering: the verl-agent single-message prompt and the chat view."""

from __future__ import annotations

import pytest

from agentgym_suite.core.prompts import HistoryStep, render_chat_messages, render_single_prompt


def test_first_turn_has_no_history_section() -> None:
    text = render_single_prompt(task="find the key", observation="You are in a hall.", history=[],
                                admissible_actions=["go north", "look"], instructions="Answer in tags.")
    assert "Your current observation is: You are in a hall." in text
    assert "Observation 1" not in text
    assert "['go north', 'look']" in text and text.endswith("Answer in tags.")


def test_history_window_keeps_the_last_steps_with_their_numbers() -> None:
    history = [HistoryStep(f"obs{i}", f"act{i}") for i in range(1, 6)]
    text = render_single_prompt(task="t", observation="now", history=history, admissible_actions=None,
                                instructions="", history_length=2)
    assert "[Observation 4: 'obs4', Action 4: 'act4']" in text
    assert "[Observation 5: 'obs5', Action 5: 'act5']" in text
    assert "obs3" not in text
    assert "You have taken 5 step(s)" in text and "This is step 6." in text


def test_chat_messages_alternate_roles() -> None:
    messages = render_chat_messages(task="t", observations=["o0", "o1"], actions=["a0"], instructions="i")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"].endswith("o0") and messages[-1]["content"] == "o1"
    with pytest.raises(ValueError):
        render_chat_messages(task="t", observations=["o0"], actions=["a0"], instructions="i")

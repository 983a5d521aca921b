"""The single prompt's history holds the projected action, as verl-agent's (not the reasoning)."""

from __future__ import annotations

from agentgym_suite.core.actions import get_action_format
from agentgym_suite.core.text_env import projected_action
from agentgym_suite.rollout.prompting import EpisodePrompt


def _project(format_name: str, raw: str) -> str:
    parsed = get_action_format(format_name).parse(raw)
    return projected_action(parsed, parsed.command)


def test_projection_as_verl_agent():
    assert _project("think_action", "<think>go on</think><action>Go To Cabinet 1</action>") == "go to cabinet 1"
    tail = "I am not sure what to do here, maybe Open The Drawer"
    assert _project("think_action", tail) == tail[-30:].strip().lower()  # no tag: the last 30 characters
    assert _project("search", "<think>x</think><search>Who Wrote Hamlet</search>") == "<search>Who Wrote Hamlet</search>"
    assert _project("search", "<think>x</think><answer>Shakespeare</answer>") == "<answer>Shakespeare</answer>"
    assert _project("search", "no tags at all") == ""


def test_single_history_keeps_the_projection_chat_keeps_the_completion():
    completion = "<think>the mug is probably on the counter</think><action>go to countertop 1</action>"
    info = {"projected_action": "go to countertop 1", "task": "put a mug in the sink"}
    single, chat = EpisodePrompt("single", history_length=2), EpisodePrompt("chat", history_length=2)
    for prompt in (single, chat):
        prompt.start("You are in a kitchen.", {"task": "put a mug in the sink"})
        prompt.record(completion, "On the countertop 1, you see a mug 1.", info)
    assert single.history[-1].action == "go to countertop 1"
    text = single.prompt()[0]["content"]
    assert "go to countertop 1" in text and "probably on the counter" not in text
    assert chat.history[-1].action == completion
    without = EpisodePrompt("single")
    without.start("obs", {})
    without.record(completion, "next", {})  # an env that reports no projection: the completion as before
    assert without.history[-1].action == completion


def test_webshop_keeps_the_last_20_characters_as_verl_agent():
    from agentgym_suite.envs.webshop import WebShopEnv

    parsed = get_action_format("think_action").parse("I will now Click The Blue Shirt please")
    assert WebShopEnv.invalid_tail_chars == 20
    assert projected_action(parsed, None, WebShopEnv.invalid_tail_chars) == "click the blue shirt please"[-20:].strip()

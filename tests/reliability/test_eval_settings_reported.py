"""``agentgym eval`` with a model behind an OpenAI-compatible server says what it did: the
client's concurrency is the default batch size, ``summary.json`` records the sampling every env
ran with and where it came from, and the prompt format the model actually got."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.commands.eval import default_batch_size, evaluation_settings

from reliability.fakes import HANG_ID, TOOLS_ID
from reliability.stub_openai import stub_server


def test_the_default_batch_size_is_the_clients_concurrency() -> None:
    assert default_batch_size("openai:m@http://h/v1", {}) == 16  # the client's documented default
    assert default_batch_size("openai:m@http://h/v1?concurrency=3", {}) == 3
    assert default_batch_size("openai:m@http://h/v1?concurrency=3", {"max_concurrency": 5}) == 5  # the flag wins
    assert default_batch_size("random", {}) == 1 and default_batch_size("hf:some/model", {}) == 1


def test_without_flags_a_run_says_it_sampled_with_the_agents_defaults() -> None:
    args = argparse.Namespace(k=None, temperature=None, max_new_tokens=None, agent="openai:m@http://h/v1")
    values, sources = evaluation_settings("TextWorld-v0", args)
    assert values == {"k": 1, "temperature": 0.4, "max_new_tokens": 256}
    assert sources["temperature"] == sources["max_new_tokens"] == "model agent default (ModelAgent)"
    args.agent = "random"  # no model: nothing sampled, nothing recorded
    assert evaluation_settings("TextWorld-v0", args)[0] == {"k": 1}


def test_concurrency_default_sampling_sources_and_prompt_format_reach_the_summary(tmp_path: Path) -> None:
    with stub_server(faults={}, delay=0.3) as (url, state):
        code = main(["eval", HANG_ID, "--agent", f"openai:stub@{url}?concurrency=3", "--out", str(tmp_path / "box"),
                     "--no-progress", "--episodes", "4"])
        assert code == 0 and state.invalid == []
        assert state.max_in_flight == 3  # no --batch-size, no --concurrency: the spec's concurrency=3 was applied
        code = main(["eval", TOOLS_ID, "--agent", f"openai:stub@{url}", "--out", str(tmp_path / "tools"),
                     "--no-progress", "--episodes", "2"])
        assert code == 0
    box = json.loads((tmp_path / "box" / "summary.json").read_text())
    assert box["agent_settings"] == {"temperature": 0.4, "max_new_tokens": 256}
    assert box["agent_settings_sources"]["temperature"] == "model agent default (ModelAgent)"
    assert box["prompt_format"] == "single" and "prompt_format_requested" not in box
    tools = json.loads((tmp_path / "tools" / "summary.json").read_text())
    assert tools["prompt_format"] == "chat" and tools["prompt_format_requested"] == "single"
    sent = [e.body for e in state.answered()]
    assert all("messages" in body for body in sent)  # what the summary says: chat messages


@pytest.mark.parametrize("flag", [["--temperature", "0.9"], ["--prompt-format", "chat"]])
def test_flags_are_recorded_as_given(tmp_path: Path, flag: list[str]) -> None:
    with stub_server(faults={}) as (url, _):
        assert main(["eval", TOOLS_ID, "--agent", f"openai:stub@{url}", "--out", str(tmp_path), "--no-progress",
                     "--episodes", "1", *flag]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    if flag[0] == "--temperature":
        assert summary["agent_settings"]["temperature"] == 0.9 and summary["agent_settings_sources"]["temperature"] == "--temperature"
    else:
        assert summary["prompt_format"] == "chat" and "prompt_format_requested" not in summary

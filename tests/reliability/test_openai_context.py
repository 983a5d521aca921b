"""Chat histories fit the context window: the server's ``max_model_len``, ``--max-context-tokens``, or
what a context-length error says. The oldest turns go first; the system prompt and the task stay,
and every turn left out is marked in the record."""

from __future__ import annotations

import json
from pathlib import Path

from agentgym_suite.cli import main
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.store import read_records
from agentgym_suite.evaluation.viewer import render_html
from agentgym_suite.rollout.request_log import expand_requests

from reliability.fakes import HANG_ID
from reliability.stub_openai import prompt_tokens, stub_server

NEW_TOKENS = 8
TURNS = 6


def _run(url: str, out: Path, **agent_options: object) -> list:
    # the stub always answers "look": the box never opens, so every episode plays all its turns
    evaluate(HANG_ID, f"openai:stub@{url}", out_dir=out, episodes=2, max_turns=TURNS, prompt_format="chat",
             progress=False, agent_options={"temperature": 0.0, "max_new_tokens": NEW_TOKENS, **agent_options})
    records, _ = read_records(out / "trajectories.jsonl")
    return records


def _window(tmp_path: Path) -> tuple[int, list]:
    """A window that holds the first three turns' prompts but not the later ones."""
    with stub_server(faults={}, box_action="look") as (url, _):
        full = _run(url, tmp_path / "full")
    sizes = [turn.usage["prompt_tokens"] for turn in full[0].turns]
    assert sizes == sorted(sizes) and len(sizes) == TURNS
    return sizes[2] + NEW_TOKENS, full


def _check_trimmed(records: list, full: list, window: int) -> None:
    """Every prompt fit; later turns left their oldest exchanges out, marked in the record."""
    untrimmed = {r.key: expand_requests(r.turns) for r in full}
    for record in records:
        assert not record.failed and record.num_turns == TURNS
        for turn, request in zip(record.turns, expand_requests(record.turns)):
            whole = untrimmed[record.key][turn.index]["messages"]
            sent = request["messages"]
            assert prompt_tokens(request) + NEW_TOKENS <= window
            assert sent[:2] == whole[:2]  # the system prompt and the task are always kept
            trimmed = turn.context_trimmed or []
            assert trimmed == list(range(len(trimmed)))  # the oldest turns went first
            assert sent[2:] == whole[2 + 2 * len(trimmed):]  # exactly those turns' action and answer are missing
        assert record.turns[-1].context_trimmed  # the last turns did not fit whole


def test_history_is_trimmed_to_the_window_the_server_reports(tmp_path: Path) -> None:
    window, full = _window(tmp_path)
    with stub_server(faults={}, box_action="look", max_model_len=window) as (url, state):
        records = _run(url, tmp_path / "served")
    assert all(e.status == 200 for e in state.exchanges) and state.invalid == []
    _check_trimmed(records, full, window)
    page = render_html(records)  # the viewer says which turns a prompt left out, and the server's counts
    assert "turns 1, 2, 3, 4 left out of the prompt" in page and " prompt / " in page


def test_max_context_tokens_trims_when_the_server_reports_no_window(tmp_path: Path) -> None:
    window, full = _window(tmp_path)
    with stub_server(faults={}, box_action="look") as (url, state):
        records = _run(url, tmp_path / "flag", max_context_tokens=window)
    assert all(e.status == 200 for e in state.exchanges)
    _check_trimmed(records, full, window)


def test_the_max_context_tokens_flag_reaches_the_client(tmp_path: Path) -> None:
    window, full = _window(tmp_path)
    with stub_server(faults={}, box_action="look") as (url, state):
        code = main(["eval", HANG_ID, "--agent", f"openai:stub@{url}", "--out", str(tmp_path / "cli"), "--no-progress",
                     "--episodes", "2", "--max-turns", str(TURNS), "--prompt-format", "chat", "--temperature", "0",
                     "--max-new-tokens", str(NEW_TOKENS), "--max-context-tokens", str(window)])
    assert code == 0 and state.invalid == []
    records, _ = read_records(tmp_path / "cli" / "trajectories.jsonl")
    _check_trimmed(records, full, window)
    settings = json.loads((tmp_path / "cli" / "config.json").read_text(encoding="utf-8"))["agent_settings"]
    assert settings["max_context_tokens"] == window


def test_a_context_length_error_is_trimmed_and_sent_again(tmp_path: Path) -> None:
    window, full = _window(tmp_path)
    with stub_server(faults={}, box_action="look", max_model_len=window, report_window=False) as (url, state):
        records = _run(url, tmp_path / "error")
    rejected = [e for e in state.exchanges if e.status == 400]
    assert rejected and all("maximum context length" in e.answer["error"]["message"] for e in rejected)
    assert len(rejected) <= 2  # the first overflow teaches the client the window; no crash follows
    _check_trimmed(records, full, window)

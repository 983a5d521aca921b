"""The OpenAI-compatible client is tuned from the command line or the ``openai:`` spec, and a timed-out
request is never sent again without a word."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentgym_suite.cli import main
from agentgym_suite.llm import load_backend
from agentgym_suite.llm.base import SamplingParams
from agentgym_suite.llm.openai_backend import OpenAIBackend, parse_openai_spec

from reliability.fakes import HANG_ID
from reliability.stub_openai import stub_server


def test_command_line_settings_reach_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", "sekret")
    with stub_server(faults={}, delay=0.4) as (url, state):
        code = main(["eval", HANG_ID, "--agent", f"openai:stub@{url}", "--out", str(tmp_path), "--no-progress",
                     "--episodes", "4", "--temperature", "0.5", "--max-new-tokens", "8",
                     "--concurrency", "2", "--no-seed", "--no-logprobs", "--api-key-env", "STUB_KEY",
                     "--header", "X-Team: evals", "--request-timeout", "30", "--max-retries", "1"])
    assert code == 0 and state.invalid == []
    sent = state.answered()
    assert len(sent) == 8  # 4 episodes x 2 turns
    assert all("seed" not in e.body and "logprobs" not in e.body for e in sent)
    assert all(e.headers.get("Authorization") == "Bearer sekret" and e.headers.get("X-Team") == "evals" for e in sent)
    assert state.max_in_flight == 2  # --concurrency 2 also set the batch size: two requests at a time
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["agent_settings"] == {"temperature": 0.5, "max_new_tokens": 8, "send_seed": False}


def test_spec_options_and_their_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTHER_KEY", "k2")
    backend = load_backend("openai:m@http://127.0.0.1:9/v1?timeout=12.5&max_retries=0&concurrency=3&seed=off"
                           "&logprobs=off&api_key_env=OTHER_KEY&header=X-A:b&tools_in_prompt=on&api-version=2024-10-01")
    assert isinstance(backend, OpenAIBackend)
    assert (backend.timeout, backend.max_retries, backend.max_concurrency) == (12.5, 0, 3)
    assert (backend.send_seed, backend.send_logprobs, backend.tools_in_prompt, backend.api_key) == (False, False, True, "k2")
    assert backend.base_url == "http://127.0.0.1:9/v1" and backend._client.headers["X-A"] == "b"
    assert backend._client.params["api-version"] == "2024-10-01"
    # settings given in code (the command line) win over the spec's
    assert load_backend("openai:m@http://h/v1?timeout=5", timeout=9.0).timeout == 9.0
    assert parse_openai_spec("m") == ("m", None, {})
    for bad, why in (("openai:m@http://h/v1?timout=3", "unknown option 'timout'"),
                     ("openai:m@http://h/v1?seed=maybe", "use on or off"),
                     ("openai:m@http://h/v1?header=novalue", "Name:value"),
                     ("openai:m@http://h/v1?concurrency=many", "not a number")):
        with pytest.raises(ValueError, match=why):
            load_backend(bad)
    with pytest.raises(ValueError, match="'NOT_SET_ANYWHERE' is not set"):
        OpenAIBackend("m", "http://h/v1", api_key_env="NOT_SET_ANYWHERE")


def test_client_flags_need_an_openai_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", HANG_ID, "--agent", "oracle", "--out", str(tmp_path), "--no-progress",
                 "--request-timeout", "5"]) == 2
    assert "apply to openai:MODEL@URL agents" in capsys.readouterr().err
    assert main(["eval", HANG_ID, "--agent", "openai:m@http://h/v1", "--out", str(tmp_path), "--no-progress",
                 "--header", "no colon"]) == 2
    assert "write it as 'Name: value'" in capsys.readouterr().err


def test_a_timed_out_request_is_sent_again_only_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentgym_suite")
    prompt = [{"role": "user", "content": "A closed box (task-0)."}]
    with stub_server(faults={}, mode="hang") as (url, state):
        sample = OpenAIBackend("stub", url, timeout=0.3, max_retries=1, backoff=0.01).generate(
            [prompt], SamplingParams(max_new_tokens=4))[0][0]
        once = OpenAIBackend("stub", url, timeout=0.3, max_retries=0).generate([prompt], SamplingParams(max_new_tokens=4))[0][0]
        state.release.set()
    assert not sample.ok and "timed out after 0.3 s (gave up after 2 attempts)" in (sample.error or "")
    assert not once.ok and "(gave up after 1 attempt)" in (once.error or "")
    resent = [r.getMessage() for r in caplog.records if "sending it again" in r.getMessage()]
    assert len(resent) == 1 and "attempt 1 of 2" in resent[0] and "--request-timeout" in resent[0]
    assert state.requests["task-0"] == 3  # two attempts, then one: every send is accounted for


def test_a_local_model_takes_autocast_but_no_client_settings() -> None:
    from agentgym_suite.evaluation.agent_specs import AgentSpecError, make_model_agent

    agent = make_model_agent("tiny", backend_options={"autocast": "bfloat16"})
    assert agent.backend.autocast == "bfloat16"
    with pytest.raises(AgentSpecError, match=r"\['timeout'\] apply to openai:MODEL@URL agents"):
        make_model_agent("tiny", backend_options={"autocast": "bfloat16", "timeout": 5})

"""Model-agent specs (``hf:…``, ``tiny`` …) go through ``llm.load_backend`` and ``ModelAgent``."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.evaluation import agent_specs
from agentgym_suite.evaluation.agent_specs import is_model_spec, make_agent
from agentgym_suite.evaluation.runner import evaluate

from .fake_env import register_fake_env

FAKE = register_fake_env()


class _FakeModelAgent:
    """Records how it was built; answers like a model that reports its tokens."""

    name = "model"

    def __init__(self, backend: Any, prompt_format: str = "single", temperature: float = 1.0) -> None:
        self.backend, self.prompt_format, self.temperature = backend, prompt_format, temperature
        self.last_turn: dict[str, Any] = {}

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        self.env = env

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.last_turn = {"prompt": f"PROMPT {observation}", "completion_tokens": 3}
        return "<think>try</think>open box"


def test_model_spec_is_wired_through_load_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    loaded: list[str] = []

    def load_backend(spec: str) -> str:
        loaded.append(spec)
        return f"backend<{spec}>"

    module = types.ModuleType("agentgym_suite.agents.model_agent")
    module.ModelAgent = _FakeModelAgent  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentgym_suite.agents.model_agent", module)
    monkeypatch.setattr("agentgym_suite.llm.load_backend", load_backend)

    agent = make_agent("openai:m@http://localhost:1/v1", prompt_format="chat", temperature=0.4, max_new_tokens=9)
    assert isinstance(agent, _FakeModelAgent) and loaded == ["openai:m@http://localhost:1/v1"]
    assert agent.backend == "backend<openai:m@http://localhost:1/v1>"
    assert agent.prompt_format == "chat" and agent.temperature == 0.4  # max_new_tokens is not accepted: dropped

    result = evaluate(FAKE, "hf:some/model", out_dir=tmp_path, episodes=2, seed=0, max_turns=2, progress=False)
    assert loaded[-1] == "hf:some/model" and result.summary["agent"] == "hf:some/model"
    turn = result.records[0].turns[0]
    assert turn.prompt_text.startswith("PROMPT ") and turn.thinking == "try" and turn.completion_tokens == 3
    assert result.summary["completion_tokens"] == 3 * sum(r.num_turns for r in result.records)


def test_model_spec_names() -> None:
    for spec in ("hf:x", "vllm:x", "openai:m@u", "default", "tiny"):
        assert is_model_spec(spec)
    for spec in ("oracle", "random", "hf", "gpt"):
        assert not is_model_spec(spec)
    assert agent_specs._supported_kwargs(lambda a, **kw: None, {"x": 1, "y": None}) == {"x": 1}


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("agentgym_suite.agents.model_agent") is None,
    reason="agentgym_suite.agents.model_agent is not in this install",
)
def test_tiny_model_agent_end_to_end(tmp_path: Path) -> None:
    result = evaluate(FAKE, "tiny", out_dir=tmp_path, episodes=2, seed=0, max_turns=2, progress=False,
                      agent_options={"max_new_tokens": 8})
    assert result.summary["episodes"] == 2 and result.summary["errors"] == 0
    assert all(1 <= r.num_turns <= 2 for r in result.records)
    turn = result.records[0].turns[0]
    assert turn.prompt_text and turn.completion_tokens is not None and 1 <= turn.completion_tokens <= 8
    assert result.summary["tokens_per_s"] is not None and result.summary["agent"] == "tiny"

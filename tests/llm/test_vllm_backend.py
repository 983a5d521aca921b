"""VLLMBackend against a stand-in ``vllm`` module (vLLM itself needs a GPU): per-prompt seeds reach
each request's sampling parameters."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from agentgym_suite.llm.base import SamplingParams


class _Params:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class _LLM:
    calls: list[Any] = []

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model = model

    def get_tokenizer(self) -> Any:
        return types.SimpleNamespace(decode=lambda ids, skip_special_tokens=True: " ".join(map(str, ids)))

    def generate(self, requests: list[dict[str, Any]], sampling_params: Any, use_tqdm: bool) -> list[Any]:
        _LLM.calls.append(sampling_params)
        output = types.SimpleNamespace(token_ids=[5, 6], logprobs=None, finish_reason="stop")
        return [types.SimpleNamespace(outputs=[output]) for _ in requests]


@pytest.fixture()
def backend(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=_LLM, SamplingParams=_Params))
    from agentgym_suite.llm.vllm_backend import VLLMBackend

    _LLM.calls = []
    return VLLMBackend("some/model")


def test_each_prompt_gets_its_own_seed(backend: Any) -> None:
    rows = backend.generate_from_ids([[1, 2], [3]], SamplingParams(temperature=1.0, max_new_tokens=4, seeds=(7, None)))
    assert [row[0].completion_ids for row in rows] == [[5, 6], [5, 6]]
    [per_request] = _LLM.calls
    assert [p.kwargs["seed"] for p in per_request] == [7, None]
    backend.generate_from_ids([[1, 2], [3]], SamplingParams(temperature=1.0, max_new_tokens=4, seed=9))
    assert _LLM.calls[-1].kwargs["seed"] == 9  # one seed: one SamplingParams for the batch
    with pytest.raises(ValueError, match="1 seeds for 2 prompts"):
        backend.generate_from_ids([[1], [2]], SamplingParams(seeds=(1,)))

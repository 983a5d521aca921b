"""Structured decoding of the simulator contract: the JSON prefix automaton and the tiny model under it."""

from __future__ import annotations

import json
import random

import pytest

from agentgym_suite.methods.envace.contract import parse_execution_result
from agentgym_suite.methods.envace.world_model import WorldModel, sampling_params
from agentgym_suite.llm.base import SamplingParams
from agentgym_suite.llm.structured import JsonPrefix, minimum_tokens


def _accepts(text: str) -> bool:
    return JsonPrefix().feed_text(text)


@pytest.mark.parametrize("text", ['{"a": 1}', '[1, -2.5e3, "x", true, null, {"b": [false]}]', '{"k": "say \\"hi\\" \\u00e9"}'])
def test_valid_json_is_accepted_and_done(text: str) -> None:
    state = JsonPrefix()
    assert state.feed_text(text) and state.done and json.loads(text) is not None


@pytest.mark.parametrize("text", ["{}", "[]", '{"": 1}', '"top level string"', "5", '{"a" 1}', '{"a": 01}', '{"a": tru}x',
                                  '{"a": "<tag>"}', '{"a":  1}', '{"a": [1,]}', '{"a": 1}}'])
def test_invalid_or_out_of_contract_prefixes_are_rejected(text: str) -> None:
    assert not _accepts(text)


def test_the_shortest_completion_closes_every_prefix_into_valid_json() -> None:
    rng = random.Random(0)
    samples = ['{"": 1}'[:2], '{"id": "bk-12", "tags": ["a", {"x": -1.5e+2}], "ok": true}', '[{"name": "Amber \\u00e9"}, null, 0]']
    for text in samples:
        for cut in range(1, len(text)):
            state = JsonPrefix()
            assert state.feed_text(text[:cut])
            completed = text[:cut] + state.completion()
            value = json.loads(completed)
            assert isinstance(value, (dict, list)) and value, completed
    assert rng  # prefixes above are exhaustive; no randomness needed


def test_depth_and_string_length_are_capped() -> None:
    assert not JsonPrefix(max_depth=2).feed_text('{"a": {"b": [')
    assert not JsonPrefix(max_string=4).feed_text('{"abcde')


@pytest.mark.parametrize("extra", [0, 24])
def test_tiny_model_always_meets_the_contract_under_structured_decoding(extra: int) -> None:
    from agentgym_suite.llm import load_backend

    backend = load_backend("tiny")
    budget = minimum_tokens(backend.tokenizer) + extra  # the tightest feasible budget, and some room
    prompts = [[{"role": "user", "content": f"simulate call {i}"}] for i in range(3)]
    params = SamplingParams(temperature=1.0, max_new_tokens=budget, structured="execution_result", seed=7)
    rows = backend.generate(prompts, params)
    for row in rows:
        sample = row[0]
        assert parse_execution_result(sample.text).valid, sample.text
        assert len(sample.completion_ids) <= budget and sample.finish_reason == "stop"
        assert len(sample.logprobs) == len(sample.completion_ids)
    free = backend.generate(prompts, SamplingParams(temperature=1.0, max_new_tokens=budget, seed=7))
    assert not any(parse_execution_result(r[0].text).valid for r in free)  # the random model alone never does


def test_simulator_sampling_profiles_differ_for_training_and_evaluation() -> None:
    assert WorldModel("policy").sampling.structured == "" and WorldModel("policy").sampling.temperature == 1.0
    evaluation = WorldModel("default").sampling
    assert evaluation.structured == "execution_result" and evaluation.temperature == 0.6 and evaluation.top_p == 0.8
    assert "</execution_result>" in evaluation.stop
    assert sampling_params({"profile": "training", "max_new_tokens": 9}).max_new_tokens == 9
    assert sampling_params({"max_new_tokens": 9}).structured == "execution_result"
    with pytest.raises(ValueError, match="profile"):
        sampling_params("fast")
    with pytest.raises(ValueError, match="structured"):
        SamplingParams(structured="yaml")
    assert WorldModel("default").prompt_style == "compact" and WorldModel("hf:x").prompt_style == "full"
    assert WorldModel("default").cpu_threads == 1 and WorldModel("hf:x").cpu_threads == 0
    with pytest.raises(ValueError, match="cpu_threads"):
        WorldModel("default", cpu_threads=-1)

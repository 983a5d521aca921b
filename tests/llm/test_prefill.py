"""Ragged prefill: the same generations as the padded batch, one forward pass per distinct prompt."""

from __future__ import annotations

import pytest

from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.llm.prefill import ragged_prefill_cache
from agentgym_suite.llm.transformers_backend import TransformersBackend

ROWS = [
    [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    [20, 21, 22],
    [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],  # a duplicate, as in a GRPO group's first turn
    [30],  # nothing to prefill for this one
    [40, 41, 42, 43, 44, 45, 46],
]


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


def _backend(tiny: TransformersBackend, prefill: str) -> TransformersBackend:
    return TransformersBackend(tiny.model, tiny.tokenizer, prefill=prefill)


@pytest.mark.parametrize("params", [SamplingParams(temperature=0, max_new_tokens=8),
                                    SamplingParams(temperature=1.0, max_new_tokens=8, seed=3)])
def test_ragged_prefill_gives_the_padded_batch_results(tiny, params):
    widths: list[int] = []
    hook = tiny.model.register_forward_pre_hook(lambda _m, args, kwargs: widths.append(kwargs["input_ids"].shape[1]),
                                                with_kwargs=True)
    try:
        ragged = _backend(tiny, "ragged").generate_from_ids(ROWS, params)
    finally:
        hook.remove()
    assert max(widths) == 11 and widths.count(len(ROWS[0])) == 0  # no padded 12-wide prefill ran
    padded = _backend(tiny, "padded").generate_from_ids(ROWS, params)
    for a, b in zip(ragged, padded):
        assert a[0].completion_ids == b[0].completion_ids
        assert a[0].prompt_ids == b[0].prompt_ids
        assert a[0].logprobs == pytest.approx(b[0].logprobs, abs=1e-4)


def test_each_distinct_prompt_is_prefilled_once(tiny):
    calls: list[int] = []
    hook = tiny.model.register_forward_pre_hook(lambda _m, args, kwargs: calls.append(kwargs["input_ids"].shape[1]),
                                                with_kwargs=True)
    try:
        cache = ragged_prefill_cache(tiny.model, ROWS, width=12)
    finally:
        hook.remove()
    assert sorted(calls) == [2, 6, 11]  # three distinct prompts longer than one token, all but their last token
    assert cache.get_seq_length() == 11
    layer = cache.layers[0]
    assert layer.keys.shape[0] == len(ROWS)
    assert bool((layer.keys[3] == 0).all())  # the one-token prompt's slots are padding


def test_nothing_to_prefill_and_bad_mode(tiny):
    assert ragged_prefill_cache(tiny.model, [[1], [2]], width=1) is None
    with pytest.raises(ValueError, match="prefill"):
        TransformersBackend(tiny.model, tiny.tokenizer, prefill="fast")

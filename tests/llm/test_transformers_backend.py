"""TransformersBackend on the tiny model: batching, token bookkeeping, sampling, scoring."""

from __future__ import annotations

import copy

import pytest

from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.llm.base import BackendError

PROMPTS = [
    [{"role": "user", "content": "hello there"}],
    "go to the kitchen",
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "a much longer prompt about the fridge and the apple"}],
    [{"role": "user", "content": "x"}],
]
GREEDY = SamplingParams(temperature=0, max_new_tokens=10)


@pytest.fixture(scope="module")
def backend():
    return load_backend("tiny", device="cpu")


def test_batched_greedy_equals_one_by_one(backend):
    batched = backend.generate(PROMPTS, GREEDY)
    assert len(batched) == len(PROMPTS)
    for prompt, samples in zip(PROMPTS, batched):
        alone = backend.generate([prompt], GREEDY)[0][0]
        assert samples[0].completion_ids == alone.completion_ids
        assert samples[0].prompt_ids == alone.prompt_ids
        assert samples[0].logprobs == pytest.approx(alone.logprobs, abs=1e-4)


def test_token_ids_decode_to_text_and_prompt_ids_are_exact(backend):
    for prompt, samples in zip(PROMPTS, backend.generate(PROMPTS, GREEDY)):
        sample = samples[0]
        assert sample.text == backend.decode(sample.completion_ids)
        assert sample.prompt_ids == backend.encode(backend.render_prompt(prompt))
        assert len(sample.logprobs) == len(sample.completion_ids) > 0
        assert all(lp <= 0 for lp in sample.logprobs)
        assert sample.finish_reason in ("stop", "length")
        if sample.finish_reason == "length":
            assert len(sample.completion_ids) == GREEDY.max_new_tokens


def test_score_matches_generation_logprobs(backend):
    samples = [s[0] for s in backend.generate(PROMPTS, GREEDY)]
    scored = backend.score([s.prompt_ids for s in samples], [s.completion_ids for s in samples], batch_size=3)
    for sample, logprobs in zip(samples, scored):
        assert logprobs == pytest.approx(sample.logprobs, abs=1e-4)


def test_sampling_n_and_seed(backend):
    params = SamplingParams(n=3, temperature=1.0, top_p=0.9, max_new_tokens=8, seed=7)
    first = backend.generate(PROMPTS[:2], params)
    again = backend.generate(PROMPTS[:2], params)
    assert [len(row) for row in first] == [3, 3]
    assert [[s.completion_ids for s in row] for row in first] == [[s.completion_ids for s in row] for row in again]
    assert len({tuple(s.completion_ids) for s in first[0]}) > 1


def test_per_prompt_seeds_make_samples_independent_of_the_batch(backend):
    import torch

    seeds = (11, 22, 33, None)
    params = SamplingParams(n=2, temperature=1.0, top_p=0.95, max_new_tokens=8, seeds=seeds)
    state = torch.random.get_rng_state()
    batched = backend.generate(PROMPTS, params)
    assert not torch.equal(state, torch.random.get_rng_state())  # the unseeded prompt drew from the global RNG
    for i, (prompt, seed) in enumerate(zip(PROMPTS[:3], seeds[:3])):
        alone = backend.generate([prompt], SamplingParams(n=2, temperature=1.0, top_p=0.95, max_new_tokens=8, seeds=(seed,)))[0]
        assert [s.completion_ids for s in batched[i]] == [s.completion_ids for s in alone]
        assert batched[i][0].logprobs == pytest.approx(alone[0].logprobs, abs=1e-4)
        assert batched[i][0].completion_ids != batched[i][1].completion_ids  # the n samples of a prompt differ
    small = SamplingParams(temperature=1.0, max_new_tokens=8, seeds=(11, 22))
    chunked = load_backend("tiny", device="cpu", max_batch_size=1).generate(PROMPTS[:2], small)
    assert [r[0].completion_ids for r in chunked] == [r[0].completion_ids for r in backend.generate(PROMPTS[:2], small)]
    state = torch.random.get_rng_state()
    backend.generate(PROMPTS[:2], small)
    assert torch.equal(state, torch.random.get_rng_state())  # all seeded: the global RNG is left alone
    with pytest.raises(ValueError, match="2 seeds for 3 prompts"):
        backend.generate(PROMPTS[:3], small)
    with pytest.raises(ValueError, match="ints or None"):
        SamplingParams(seeds=(1.5,))


def test_unseeded_calls_draw_fresh_samples(backend):
    import torch

    params = SamplingParams(temperature=1.0, max_new_tokens=12)
    state = torch.random.get_rng_state()
    first = backend.generate(PROMPTS[:1], params)[0][0].completion_ids
    assert not torch.equal(state, torch.random.get_rng_state())  # the global RNG moved on
    again = backend.generate(PROMPTS[:1], params)[0][0].completion_ids
    assert first != again
    seeded = SamplingParams(temperature=1.0, max_new_tokens=12, seed=3)
    state = torch.random.get_rng_state()
    backend.generate(PROMPTS[:1], seeded)
    assert torch.equal(state, torch.random.get_rng_state())  # a seeded call leaves it alone


def test_stop_string_ends_generation(backend):
    free = backend.generate([PROMPTS[1]], SamplingParams(temperature=0, max_new_tokens=10))[0][0]
    stop = backend.decode(free.completion_ids[1:3], skip_special_tokens=False)
    assert stop.strip() or stop  # a non-empty stop string taken from the model's own output
    stopped = backend.generate([PROMPTS[1]], SamplingParams(temperature=0, max_new_tokens=10, stop=(stop,)))[0][0]
    assert stopped.finish_reason == "stop"
    assert stop in backend.decode(stopped.completion_ids, skip_special_tokens=False)
    assert stopped.completion_ids == free.completion_ids[: len(stopped.completion_ids)]
    assert len(stopped.completion_ids) <= 3


def test_chat_template_renders_tools(backend):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    text = backend.render_prompt([{"role": "user", "content": "weather?"}], tools)
    assert "<tools>" in text and "get_weather" in text
    assert text.endswith("<|im_start|>assistant\n")
    out = backend.generate([[{"role": "user", "content": "weather?"}]], GREEDY, tools=[tools])[0][0]
    assert out.prompt_ids == backend.encode(text)


def test_bad_prompts_raise_clear_errors(backend):
    with pytest.raises(ValueError, match="chat messages"):
        backend.generate([{"content": "no list"}], GREEDY)
    with pytest.raises(BackendError, match="empty prompt"):
        backend.generate_from_ids([[]], GREEDY)
    with pytest.raises(ValueError, match="one per prompt"):
        backend.generate(PROMPTS, GREEDY, tools=[None])
    with pytest.raises(ValueError, match="temperature"):
        SamplingParams(temperature=-1)


def test_chat_template_kwargs_reach_the_template(backend):
    """``chat_template_kwargs`` (e.g. Qwen3's ``enable_thinking: false``) are variables of every rendering."""
    from agentgym_suite.llm.transformers_backend import TransformersBackend

    tokenizer = copy.deepcopy(backend.tokenizer)
    tokenizer.chat_template = ("{% for m in messages %}{{ m['content'] }}{% endfor %}"
                               "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>{% endif %}")
    quiet = TransformersBackend(backend.model, tokenizer, chat_template_kwargs={"enable_thinking": False})
    default = TransformersBackend(backend.model, tokenizer)
    messages = [{"role": "user", "content": "hi"}]
    assert quiet.render_prompt(messages) == "hi<think>\n\n</think>"
    assert default.render_prompt(messages) == "hi"


def test_autocast_generates_in_bf16_and_rejects_unknown_dtypes(backend):
    import torch

    seen: list[torch.dtype] = []
    first_linear = next(m for m in backend.model.modules() if isinstance(m, torch.nn.Linear))
    hook = first_linear.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    try:
        plain = backend.generate(PROMPTS[:2], GREEDY)
        assert set(seen) == {torch.float32}
        seen.clear()
        backend.autocast = "bfloat16"
        cast = backend.generate(PROMPTS[:2], GREEDY)
        assert set(seen) == {torch.bfloat16}  # the prefill and every decoding step
    finally:
        backend.autocast = None
        hook.remove()
    assert next(backend.model.parameters()).dtype == torch.float32  # the weights stay as loaded
    assert [len(s[0].completion_ids) for s in cast] and all(lp <= 0 for s in cast for lp in s[0].logprobs)
    assert len(plain) == len(cast) == 2
    with pytest.raises(ValueError, match="autocast='int8'"):
        type(backend)(backend.model, backend.tokenizer, autocast="int8")

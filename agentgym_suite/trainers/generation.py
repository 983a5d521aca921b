"""The vLLM generation backend over the trainer's live policy and the sampling settings of the
transformers path (:func:`rollout_sampling`).

The rollout needs a token-level backend (``generate_from_ids``, ``render_prompt``,
``encode``, ``decode``) that samples from the weights being trained; the trainer's
``_policy_backend`` picks one per rollout:

* :class:`~agentgym_suite.llm.transformers_backend.TransformersBackend` over the unwrapped
  model (default; also under DeepSpeed ZeRO-3 / FSDP via TRL's ``unwrap_model_for_generation``);
* :class:`TRLVLLMBackend` over TRL's own vLLM generator (``use_vllm=True``, colocate or
  server mode), which keeps TRL's weight sync (see :mod:`~agentgym_suite.trainers.vllm_rollout`).

In server mode (and colocate mode with tensor parallelism) every ``generate`` call gathers the
prompts of all processes and hands each its slice by position, which needs the same number of
prompts everywhere: :class:`TRLVLLMBackend` pads each call to the largest count over processes
with one-token prompts (and makes the call with no prompts of its own), then checks that the
prompt ids that come back are the ones it sent.
"""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.llm.base import BackendError, Sample, SamplingParams
from agentgym_suite.rollout.episodes import describe_error


def template_kwargs(args: Any) -> dict[str, Any]:
    """The config's ``chat_template_kwargs`` (TRL's field; e.g. Qwen3's ``{"enable_thinking": false}``) as a dict.

    Raises:
        ValueError: for a value that is neither a mapping nor a JSON object.
    """
    import json

    value = getattr(args, "chat_template_kwargs", None)
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"chat_template_kwargs must be a mapping such as {{enable_thinking: false}}, got {value!r}.")
    return dict(value)


class TRLVLLMBackend:
    """Token backend over ``GRPOTrainer.vllm_generation`` (sampling settings come from TRL's config).

    Args:
        vllm_generation: TRL's ``VLLMGeneration``.
        tokenizer: the trainer's tokenizer.
        eos_token_ids: ids that end a completion (``finish_reason`` ``stop``).
        sync: the trainer's :class:`~agentgym_suite.trainers.distributed.ProcessSync`; with several
            processes every call is padded to the same prompt count where vLLM gathers prompts,
            and a failing call returns error samples instead of raising (no per-prompt retries on
            one process alone).
        chat_template_kwargs: further variables of the chat template (TRL's ``chat_template_kwargs``,
            e.g. ``{"enable_thinking": false}``).
    """

    supports_token_prompts = True

    def __init__(self, vllm_generation: Any, tokenizer: Any, eos_token_ids: Sequence[int], sync: Any = None,
                 chat_template_kwargs: dict[str, Any] | None = None) -> None:
        self.vllm_generation = vllm_generation
        self.tokenizer = tokenizer
        self.eos_token_ids = set(int(t) for t in eos_token_ids)
        self.name = "trl-vllm"
        self.sync = sync
        self.pad_token_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)
        distributed = bool(sync is not None and sync.distributed)
        self.gathers_prompts = distributed and (
            vllm_generation.mode == "server" or int(getattr(vllm_generation, "tensor_parallel_size", 1) or 1) > 1)
        self.errors_as_samples = distributed
        self.calls = 0
        self.chat_template_kwargs = dict(chat_template_kwargs or {})

    def render_prompt(self, prompt: Any, tools: Any = None, *, add_generation_prompt: bool = True) -> str:
        """Strings as-is; message lists through the tokenizer's chat template."""
        if isinstance(prompt, str):
            return prompt
        kwargs: dict[str, Any] = {**self.chat_template_kwargs, "tokenize": False,
                                  "add_generation_prompt": add_generation_prompt}
        if tools:
            kwargs["tools"] = tools
        return self.tokenizer.apply_chat_template(prompt, **kwargs)

    def encode(self, text: str) -> list[int]:
        """Token ids without special tokens added."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = True) -> str:
        """Text of ``ids``."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Sequence[Any] | None = None
                 ) -> list[list[Sample]]:
        """Render and tokenise each prompt, then generate from the ids (an env that borrows the
        policy calls this inside its steps). vLLM samples with TRL's own settings, so ``params`` only sets ``n``."""
        tool_lists = list(tools) if tools is not None else [None] * len(prompts)
        ids = [self.encode(self.render_prompt(p, t)) for p, t in zip(prompts, tool_lists)]
        return self.generate_from_ids(ids, params)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """One vLLM call for all prompts; ``params.n`` samples each (each prompt is sent ``n`` times)."""
        rows = [list(p) for p in prompt_ids for _ in range(params.n)]
        width = self.sync.max(len(rows)) if self.gathers_prompts else len(rows)
        if width == 0:
            return []
        if not self.errors_as_samples:
            return self._generate(rows, width, params.n)
        try:
            return self._generate(rows, width, params.n)
        except Exception as exc:  # every prompt of the call fails; the other processes made the same call
            error = describe_error(exc)
            return [[Sample(text="", finish_reason="error", has_token_ids=False, error=error)] * params.n
                    for _ in prompt_ids]

    def _generate(self, rows: list[list[int]], width: int, n: int) -> list[list[Sample]]:
        prompts = rows + [[self.pad_token_id]] * (width - len(rows))
        self.calls += 1
        sent_ids, completion_ids, logprobs, _ = self.vllm_generation.generate(
            prompts=prompts, images=None, num_generations=1
        )
        if logprobs is None:
            raise BackendError("vLLM returned no log-probs; the trainer needs the sampled tokens' log-probs (logprobs=0).")
        for k, prompt in enumerate(rows):
            if sent_ids is not None and list(sent_ids[k]) != prompt:
                raise BackendError(
                    f"vLLM answered prompt {k} with the completion of another prompt; every process must send the "
                    "same number of prompts per call (see TRLVLLMBackend)."
                )
        samples = [self._sample(rows[k], completion_ids[k], logprobs[k]) for k in range(len(rows))]
        return [samples[i : i + n] for i in range(0, len(samples), n)]

    def _sample(self, prompt: list[int], completion: Sequence[int], logprobs: Sequence[Sequence[Any]]) -> Sample:
        ids = list(completion)
        reason = "stop" if ids and ids[-1] in self.eos_token_ids else "length"
        return Sample(
            text=self.decode(ids), prompt_ids=list(prompt), completion_ids=ids,
            logprobs=[float("nan") if lp[0] is None else float(lp[0]) for lp in logprobs], finish_reason=reason,
        )


SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_new_tokens")
"""``generation_kwargs`` keys that are sampling settings (the rest go to ``GenerationConfig``)."""


def rollout_sampling(args: Any, *, temperature: float, top_p: float | None, top_k: int | None, min_p: float | None,
                     repetition_penalty: float | None, max_new_tokens: int, seed: int | None
                     ) -> tuple[SamplingParams, dict[str, Any]]:
    """The transformers path's sampling settings from TRL's (``temperature``, ``top_p``, ``top_k``,
    ``min_p``, ``repetition_penalty``, ``generation_kwargs``), and the rest of ``generation_kwargs``
    for the backend's ``GenerationConfig``. As in TRL, ``generation_kwargs`` win over the fields;
    ``do_sample: false`` means greedy decoding."""
    extra = dict(getattr(args, "generation_kwargs", None) or {})
    values: dict[str, Any] = {"temperature": temperature, "top_p": top_p, "top_k": top_k, "min_p": min_p,
                              "repetition_penalty": repetition_penalty, "max_new_tokens": max_new_tokens}
    values.update({k: extra.pop(k) for k in SAMPLING_KEYS if k in extra})
    if extra.pop("do_sample", True) is False:
        values["temperature"] = 0.0
    params = SamplingParams(
        n=1, temperature=float(values["temperature"]), top_p=float(values["top_p"] or 1.0),
        top_k=int(values["top_k"] or 0), min_p=float(values["min_p"] or 0.0),
        repetition_penalty=float(values["repetition_penalty"] or 1.0), max_new_tokens=int(values["max_new_tokens"]),
        seed=seed,
    )
    return params, extra

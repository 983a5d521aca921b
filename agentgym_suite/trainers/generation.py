"""Generation backends over the trainer's live policy.

The rollout needs a token-level backend (``generate_from_ids``, ``render_prompt``,
``encode``, ``decode``) that samples from the weights being trained:

* :class:`~agentgym_suite.llm.transformers_backend.TransformersBackend` over the unwrapped
  model (default; also under DeepSpeed ZeRO-3 / FSDP via TRL's ``unwrap_model_for_generation``);
* :class:`TRLVLLMBackend` over TRL's own vLLM generator (``use_vllm=True``, colocate or
  server mode), which keeps TRL's weight sync.
"""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.llm.base import Sample, SamplingParams


class TRLVLLMBackend:
    """Token backend over ``GRPOTrainer.vllm_generation`` (sampling settings come from TRL's config)."""

    supports_token_prompts = True

    def __init__(self, vllm_generation: Any, tokenizer: Any, eos_token_ids: Sequence[int]) -> None:
        self.vllm_generation = vllm_generation
        self.tokenizer = tokenizer
        self.eos_token_ids = set(int(t) for t in eos_token_ids)
        self.name = "trl-vllm"

    def render_prompt(self, prompt: Any, tools: Any = None, *, add_generation_prompt: bool = True) -> str:
        """Strings as-is; message lists through the tokenizer's chat template."""
        if isinstance(prompt, str):
            return prompt
        kwargs: dict[str, Any] = {"tokenize": False, "add_generation_prompt": add_generation_prompt}
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
        """Render and tokenise each prompt, then generate from the ids (the rehearsal env's world
        model calls this). vLLM samples with TRL's own settings, so ``params`` only sets ``n``."""
        tool_lists = list(tools) if tools is not None else [None] * len(prompts)
        ids = [self.encode(self.render_prompt(p, t)) for p, t in zip(prompts, tool_lists)]
        return self.generate_from_ids(ids, params)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """One vLLM call for all prompts; ``params.n`` samples each."""
        _, completion_ids, logprobs, _ = self.vllm_generation.generate(
            prompts=[list(p) for p in prompt_ids], images=None, num_generations=params.n
        )
        out: list[list[Sample]] = []
        for i, prompt in enumerate(prompt_ids):
            group = []
            for j in range(params.n):
                k = i * params.n + j
                ids = list(completion_ids[k])
                reason = "stop" if ids and ids[-1] in self.eos_token_ids else "length"
                group.append(Sample(
                    text=self.decode(ids), prompt_ids=list(prompt), completion_ids=ids,
                    logprobs=[float("nan") if lp[0] is None else float(lp[0]) for lp in logprobs[k]],
                    finish_reason=reason,
                ))
            out.append(group)
        return out

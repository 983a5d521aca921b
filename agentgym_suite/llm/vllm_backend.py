"""Generation with vLLM's offline engine (GPU only; optional extra ``[vllm]``).

vLLM is imported only when a :class:`VLLMBackend` is built; without it the error names the
install command. Chat prompts are rendered with the model's own tokenizer and sent as token
ids, so the recorded prompt ids are exactly what the engine saw. Stop strings stay in the
text (``include_stop_str_in_output``) so text and token ids agree, as with transformers.
"""

from __future__ import annotations

from typing import Any, Sequence

from agentgym_suite.core.errors import BackendNotInstalledError
from agentgym_suite.llm.base import Prompt, Sample, SamplingParams, TokenizerMixin, Tools, check_prompt
from agentgym_suite.llm.chat_templates import render_chat

INSTALL_HINT = "pip install 'agentgym-suite[vllm]'"


def import_vllm() -> Any:
    """Import and return the ``vllm`` module, or raise with the install command."""
    try:
        import vllm
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"The vLLM backend needs the optional package 'vllm' (GPU only), which is not installed "
            f"({exc}). Install it with:  {INSTALL_HINT}"
        ) from None
    return vllm


class VLLMBackend(TokenizerMixin):
    """A :class:`~agentgym_suite.llm.base.TokenBackend` over ``vllm.LLM``.

    Args:
        model: model path or hub id.
        **engine_kwargs: passed to ``vllm.LLM`` (``gpu_memory_utilization``, ``tensor_parallel_size``,
            ``max_model_len``, ``dtype``…).
    """

    supports_token_prompts = True

    def __init__(self, model: str, **engine_kwargs: Any) -> None:
        vllm = import_vllm()
        self._vllm = vllm
        self.llm = vllm.LLM(model=model, **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self.name = f"vllm:{model}"

    def render_prompt(self, prompt: Prompt, tools: Tools | None = None, *, add_generation_prompt: bool = True) -> str:
        """Strings as-is; message lists through the tokenizer's chat template."""
        check_prompt(prompt)
        if isinstance(prompt, str):
            return prompt
        return render_chat(self.tokenizer, prompt, tools, add_generation_prompt=add_generation_prompt)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """Generate from token ids in one engine call.

        With per-prompt seeds (``params.seeds``) each request gets its own sampling parameters
        and seed (vLLM then samples it with a generator of its own); with one ``seed`` every
        request carries that seed."""
        params.check_seeds(len(prompt_ids))

        def sampling_for(seed: int | None) -> Any:
            return self._vllm.SamplingParams(
                n=params.n,
                temperature=params.temperature,
                top_p=params.top_p,
                top_k=params.top_k if params.top_k else -1,
                min_p=params.min_p,
                repetition_penalty=params.repetition_penalty,
                max_tokens=params.max_new_tokens,
                stop=list(params.stop) or None,
                seed=seed,
                logprobs=0,
                include_stop_str_in_output=True,
                skip_special_tokens=True,
            )

        if params.seeds is None:
            sampling: Any = sampling_for(params.seed)
        else:
            sampling = [sampling_for(seed) for seed in params.seeds]
        requests = [{"prompt_token_ids": list(ids)} for ids in prompt_ids]
        outputs = self.llm.generate(requests, sampling_params=sampling, use_tqdm=False)
        results: list[list[Sample]] = []
        for ids, output in zip(prompt_ids, outputs):
            row = []
            for comp in output.outputs:
                token_ids = list(comp.token_ids)
                logprobs = [float(step[tok].logprob) for tok, step in zip(token_ids, comp.logprobs or [])]
                row.append(Sample(
                    text=self.decode(token_ids),
                    prompt_ids=list(ids),
                    completion_ids=token_ids,
                    logprobs=logprobs,
                    finish_reason="length" if comp.finish_reason == "length" else "stop",
                ))
            results.append(row)
        return results

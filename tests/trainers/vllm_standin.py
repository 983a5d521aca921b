"""A stand-in for vLLM under TRL's own ``VLLMGeneration`` (TRL 1.16), for CPU tests.

TRL's ``VLLMGeneration.generate`` and ``sync_weights`` run unchanged; only what they call on
vLLM is replaced: in colocate mode the ``vllm.LLM`` engine (``generate`` returning
``RequestOutput``-shaped records with per-token ``Logprob`` dicts, ``sleep``/``wake_up``,
``reset_prefix_cache``, and the model runner's ``load_weights`` that TRL pushes weights
through), in server mode TRL's ``VLLMClient`` (``generate`` returning the same dict as the
HTTP client, ``update_named_params``, ``get_server_info``). Both sample with their own copy of
the model, which only changes when TRL pushes weights, and report processed log-probs
(``logprobs_mode="processed_logprobs"``: after temperature), as TRL configures vLLM to.

``install(monkeypatch)`` makes ``GRPOTrainer`` build this class instead of TRL's, and lifts the
trainer's refusal of server mode without CUDA (the stand-in client needs no NCCL to take weights).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import torch
from trl.generation.vllm_generation import VLLMGeneration

EVENTS: list[str] = []
"""Every engine call in order (``generate``, ``load_weights``, ``wake_up:<tags>``, ``sleep``), for tests."""
TEMPERATURES: list[float] = []
"""The sampling temperature of every generate call."""


class StandInSamplingParams:
    """``vllm.SamplingParams`` as TRL builds it in colocate mode."""

    def __init__(self, n: int = 1, repetition_penalty: float = 1.0, temperature: float = 1.0, top_p: float = 1.0,
                 top_k: int = 0, min_p: float = 0.0, max_tokens: int = 16, logprobs: int | None = 0,
                 **extra: Any) -> None:
        self.n, self.temperature, self.top_p, self.top_k = n, temperature, top_p, top_k
        self.min_p, self.repetition_penalty, self.max_tokens, self.logprobs = min_p, repetition_penalty, max_tokens, logprobs
        self.extra = extra


@dataclass
class Logprob:
    """``vllm.logprobs.Logprob``."""

    logprob: float
    rank: int = 1


@dataclass
class CompletionOutput:
    """``vllm.CompletionOutput``: the sampled ids and one ``{token_id: Logprob}`` per token."""

    token_ids: list[int]
    logprobs: list[dict[int, Logprob]] | None


@dataclass
class RequestOutput:
    """``vllm.RequestOutput``."""

    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)


class _Sampler:
    """Samples from its own copy of the policy with Hugging Face ``generate``."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = copy.deepcopy(model).float().eval()
        self.tokenizer = tokenizer
        self.calls = 0

    def load_weights(self, weights: Any) -> None:
        params = dict(self.model.named_parameters())
        for name, tensor in weights:
            if name in params:
                params[name].data.copy_(tensor.detach().to(params[name].dtype))
        EVENTS.append("load_weights")

    def sample(self, prompts: list[list[int]], temperature: float, max_tokens: int) -> list[tuple[list[int], list[float]]]:
        self.calls += 1
        TEMPERATURES.append(float(temperature))
        eos = self.tokenizer.eos_token_id
        out = []
        for prompt in prompts:  # one at a time: no padding, exact per-prompt log-probs
            ids = torch.tensor([prompt])
            with torch.no_grad():
                gen = self.model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                          temperature=max(temperature, 1e-5), top_k=0, top_p=1.0,
                                          max_new_tokens=max_tokens, eos_token_id=eos, pad_token_id=eos,
                                          output_scores=True, return_dict_in_generate=True)
            tokens = gen.sequences[0, len(prompt):].tolist()
            logps = [float(torch.log_softmax(score[0].float(), -1)[t]) for score, t in zip(gen.scores, tokens)]
            if eos in tokens:
                end = tokens.index(eos) + 1
                tokens, logps = tokens[:end], logps[:end]
            out.append((tokens, logps))
        return out


class StandInLLM(_Sampler):
    """What TRL's ``VLLMGeneration`` calls on ``vllm.LLM`` in colocate mode."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        super().__init__(model, tokenizer)
        self.llm_engine = SimpleNamespace(model_executor=SimpleNamespace(driver_worker=SimpleNamespace(
            model_runner=SimpleNamespace(model=self))))
        self.awake = {"weights": True, "kv_cache": True}

    def generate(self, prompts: list[dict[str, Any]], sampling_params: StandInSamplingParams,
                 use_tqdm: bool = False) -> list[RequestOutput]:
        if not (self.awake["weights"] and self.awake["kv_cache"]):
            raise RuntimeError(f"generate on a sleeping engine ({self.awake})")
        EVENTS.append("generate")
        ids = [p["prompt_token_ids"] for p in prompts]
        samples = self.sample(ids, sampling_params.temperature, sampling_params.max_tokens)
        return [RequestOutput(list(p), [CompletionOutput(t, [{tok: Logprob(lp)} for tok, lp in zip(t, lps)])])
                for p, (t, lps) in zip(ids, samples)]

    def wake_up(self, tags: list[str] | None = None) -> None:
        for tag in tags or list(self.awake):
            self.awake[tag] = True
        EVENTS.append(f"wake_up:{','.join(tags or [])}")

    def sleep(self, level: int = 1) -> None:
        self.awake = {"weights": False, "kv_cache": False}
        EVENTS.append("sleep")

    def reset_prefix_cache(self) -> None:
        """No cache to reset."""


class StandInClient(_Sampler):
    """What TRL's ``VLLMGeneration`` calls on its ``VLLMClient`` in server mode."""

    def generate(self, prompts: list[list[int]], features: Any = None, n: int = 1, max_tokens: int = 16,
                 temperature: float = 1.0, **_: Any) -> dict[str, Any]:
        EVENTS.append("generate")
        samples = self.sample([list(p) for p in prompts for _ in range(n)], temperature, max_tokens)
        return {"prompt_ids": [list(p) for p in prompts], "completion_ids": [t for t, _ in samples],
                "logprobs": [[[lp] for lp in lps] for _, lps in samples],
                "logprob_token_ids": [[[tok] for tok in t] for t, _ in samples]}

    def update_named_params(self, metadata: Any, params: Any) -> None:
        self.load_weights(params)

    def reset_prefix_cache(self) -> None:
        """No cache to reset."""

    def get_server_info(self) -> dict[str, Any]:
        return {"model_config": {"logprobs_mode": "processed_logprobs"}}


class StandInVLLMGeneration(VLLMGeneration):
    """TRL's ``VLLMGeneration`` with the engine (colocate) or the client (server) replaced."""

    def _init_vllm(self) -> None:
        if self.mode == "server":
            if self.accelerator.is_main_process:
                self.vllm_client = StandInClient(self.model, self.processing_class)
        else:
            self.llm = StandInLLM(self.model, self.processing_class)
            if self.enable_sleep_mode:
                self.llm.sleep(level=2)
            self._llm_weights_sleeping = self.enable_sleep_mode
        self.accelerator.wait_for_everyone()


def install(patch: Any) -> None:
    """Make TRL's ``GRPOTrainer`` use :class:`StandInVLLMGeneration` (``patch``: pytest's monkeypatch,
    or any object with ``setattr(target, name, value)``)."""
    import trl.generation.vllm_generation as vg
    import trl.trainer.grpo_trainer as gt

    from agentgym_suite.trainers import vllm_rollout

    patch.setattr(gt, "VLLMGeneration", StandInVLLMGeneration)
    # the stand-in client takes the weights in-process, so server mode needs no NCCL (no CUDA) here
    patch.setattr(vllm_rollout, "server_weight_sync_available", lambda args: True)
    patch.setattr(vg, "SamplingParams", StandInSamplingParams, raising=False)
    EVENTS.clear()
    TEMPERATURES.clear()

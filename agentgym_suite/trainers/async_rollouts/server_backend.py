"""The rollout threads' generation backend on an OpenAI-compatible vLLM server, one policy version
(a LoRA adapter loaded by name) per call.

:class:`ServedAdapterBackend` is a token backend (``supports_token_prompts``): the rollout engine
renders and tokenises the prompts with the trainer's tokenizer, exactly as on the transformers
path, and each prompt goes to ``POST /v1/completions`` as token ids. The request is the one TRL's
``AsyncRolloutWorker._generate_one_turn`` (``trl.experimental.async_grpo``) sends: ``prompt``
as ids, ``model`` = the adapter's name (in vLLM's API an adapter *is* a model name),
``return_token_ids`` and ``logprobs: 0``, so the answer carries the sampled ids and each sampled
token's log-probability, which the importance correction needs. The rendering, tokenising and
sample-building are :class:`~agentgym_suite.trainers.generation.TRLVLLMBackend`'s (this class
extends it); only the call to vLLM is an HTTP request here.

The adapter is read once per call from the thread's
:class:`~agentgym_suite.trainers.async_rollouts.lora_server.ServedAdapter`, so every prompt of a
turn (the G episodes of a group and the other groups of the run) is sampled by one version, and
each turn records the request (without the prompt ids) with the adapter name it used.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import httpx

from agentgym_suite.llm.base import BackendError, Sample, SamplingParams
from agentgym_suite.llm.http_retry import RetryPolicy, post_json_with_retries
from agentgym_suite.trainers.generation import TRLVLLMBackend

logger = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""Answers worth sending the request again for (a busy or restarting server); the shared retry loop
(:mod:`~agentgym_suite.llm.http_retry`) sends them again. The OpenAI backend's list adds 409; this
one keeps the statuses it had before the loop was shared."""


class ServedAdapterBackend(TRLVLLMBackend):
    """Token backend that samples from the adapter a :class:`ServedAdapter` names on a vLLM server.

    Args:
        base_url: the server's root URL (without ``/v1``).
        adapter: the thread's :class:`~agentgym_suite.trainers.async_rollouts.lora_server.ServedAdapter`
            (its ``name`` is read once per call).
        tokenizer: the thread's copy of the trainer's tokenizer.
        eos_token_ids: ids that end a completion (the server's ``finish_reason`` decides ``stop`` or ``length``).
        chat_template_kwargs: the trainer's ``chat_template_kwargs``.
        timeout: seconds one request may take.
        max_retries: extra attempts after a connection error, a timeout or a 5xx/429 answer.
        max_concurrency: requests in flight at once (vLLM batches them).
    """

    supports_token_prompts = True

    def __init__(self, base_url: str, adapter: Any, tokenizer: Any, eos_token_ids: Sequence[int], *,
                 chat_template_kwargs: dict[str, Any] | None = None, timeout: float = 600.0, max_retries: int = 2,
                 max_concurrency: int = 16) -> None:
        super().__init__(None, tokenizer, eos_token_ids, sync=None, chat_template_kwargs=chat_template_kwargs)
        self.base_url = base_url.rstrip("/")
        self.adapter = adapter
        self.name = "lora-server"
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_concurrency = int(max_concurrency)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """One ``/v1/completions`` request per prompt and sample (each with its own seed), all naming the
        adapter the thread holds now."""
        params.check_seeds(len(prompt_ids))
        model = self.adapter.name
        jobs = [(list(prompt), params.seed_for(i)) for i, prompt in enumerate(prompt_ids) for _ in range(params.n)]
        if not jobs:
            return []
        with httpx.Client(timeout=self.timeout) as client:
            if len(jobs) == 1:
                samples = [self._one(client, model, *jobs[0], params)]
            else:
                with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(jobs))) as pool:
                    samples = list(pool.map(lambda job: self._one(client, model, *job, params), jobs))
        self.calls += 1
        return [samples[i : i + params.n] for i in range(0, len(samples), params.n)]

    def request_body(self, model: str, prompt: list[int], seed: int | None, params: SamplingParams) -> dict[str, Any]:
        """The completions request for one prompt (TRL ``AsyncRolloutWorker``'s fields)."""
        body: dict[str, Any] = {
            "model": model, "prompt": prompt, "max_tokens": params.max_new_tokens, "temperature": params.temperature,
            "top_p": params.top_p, "top_k": params.top_k if params.top_k > 0 else -1, "min_p": params.min_p,
            "repetition_penalty": params.repetition_penalty, "n": 1, "return_token_ids": True, "logprobs": 0,
        }
        if seed is not None:
            body["seed"] = int(seed)
        return body

    def _one(self, client: httpx.Client, model: str, prompt: list[int], seed: int | None,
             params: SamplingParams) -> Sample:
        body = self.request_body(model, prompt, seed, params)
        data = self._post(client, f"{self.base_url}/v1/completions", body)
        try:
            choice = data["choices"][0]
            ids = [int(i) for i in choice["token_ids"]]
            logprobs = choice["logprobs"]["token_logprobs"]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise BackendError(
                f"{self.base_url}/v1/completions answered without the sampled token ids and log-probs "
                f"({type(exc).__name__}: {exc}): {str(data)[:200]}. The server must be vLLM (it takes "
                "return_token_ids and logprobs).") from None
        if len(logprobs) != len(ids):
            raise BackendError(f"the server returned {len(logprobs)} log-probs for {len(ids)} sampled tokens.")
        sample = self._sample(prompt, ids, [[lp] for lp in logprobs])
        sample.finish_reason = "length" if choice.get("finish_reason") == "length" else "stop"
        sample.request = {k: v for k, v in body.items() if k != "prompt"} | {"prompt_tokens": len(prompt)}
        usage = data.get("usage")
        sample.usage = usage if isinstance(usage, dict) else None
        return sample

    def _post(self, client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
        def refuse(response: httpx.Response) -> BackendError:
            if response.status_code == 404:
                return BackendError(
                    f"{url} does not serve {body['model']!r} (HTTP 404: {response.text[:200]}): the adapter of this "
                    "policy version was unloaded (it fell out of the max_staleness window, so its group is dropped "
                    "anyway) or the server was restarted.")
            return BackendError(f"{url} answered HTTP {response.status_code}: {response.text[:300]}")

        policy = RetryPolicy(self.max_retries, backoff=1.0, max_backoff=10.0, retry_status=RETRY_STATUS)
        response = post_json_with_retries(client, url, body, policy, timeout_s=self.timeout, refuse=refuse)
        try:
            data = response.json()
        except ValueError:
            raise BackendError(f"{url} returned a response that is not JSON: {response.text[:200]!r}") from None
        if not isinstance(data, dict):
            raise BackendError(f"{url} returned JSON that is not an object: {str(data)[:200]}")
        return data

"""Generation through any OpenAI-compatible HTTP endpoint (OpenAI, vLLM serve, SGLang, TGI…).

Plain ``httpx``: one request per prompt, at most ``max_concurrency`` in flight, each with a
timeout, retried with exponential backoff on connection errors, timeouts, HTTP 429 and 5xx.
Chat prompts go to ``/chat/completions``, strings to ``/completions``. The API key is read
from ``OPENAI_API_KEY`` unless given. Token ids and log-probs are returned when the server
sends them (vLLM does with ``request_token_ids=True``); otherwise they are empty and
``Sample.has_token_ids`` is False. A request that still fails after the retries becomes a
``Sample`` with ``finish_reason="error"`` and the reason in ``error``: one bad request never
sinks the batch.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import httpx

from agentgym_suite.llm.base import BackendError, Prompt, Sample, SamplingParams, Tools, check_prompt, normalise_tools

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAIBackend:
    """A :class:`~agentgym_suite.llm.base.Backend` over an OpenAI-compatible server.

    Args:
        model: model name sent in each request.
        base_url: server root including ``/v1`` (default: ``https://api.openai.com/v1``).
        api_key: bearer token; defaults to ``$OPENAI_API_KEY`` (may be empty for local servers).
        timeout: seconds per request attempt.
        max_retries: extra attempts after the first for retryable failures.
        backoff: first retry delay in seconds; doubles each retry (capped at ``max_backoff``).
        max_concurrency: requests in flight at once.
        request_token_ids: ask the server for prompt/completion token ids (vLLM's
            ``return_token_ids``); leave False for servers that reject unknown fields.
        extra_body: more JSON fields merged into every request.
    """

    supports_token_prompts = False

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_concurrency: int = 16,
        request_token_ids: bool = False,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}.")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}.")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_concurrency = max_concurrency
        self.request_token_ids = request_token_ids
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{model}@{self.base_url}"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def generate(
        self,
        prompts: Sequence[Prompt],
        params: SamplingParams,
        tools: Sequence[Tools | None] | None = None,
    ) -> list[list[Sample]]:
        """Send one request per prompt (``max_concurrency`` at a time); ``params.n`` samples each."""
        for prompt in prompts:
            check_prompt(prompt)
        tool_lists = normalise_tools(prompts, tools)
        jobs = list(zip(prompts, tool_lists))
        if len(jobs) <= 1:
            return [self._one(p, t, params) for p, t in jobs]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(jobs))) as pool:
            return list(pool.map(lambda job: self._one(job[0], job[1], params), jobs))

    # ------------------------------------------------------------------ one request
    def _one(self, prompt: Prompt, tools: Tools | None, params: SamplingParams) -> list[Sample]:
        chat = not isinstance(prompt, str)
        body: dict[str, Any] = {
            "model": self.model,
            "n": params.n,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_new_tokens,
            "logprobs": True if chat else 1,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        if chat:
            body["messages"] = prompt
            if tools:
                body["tools"] = tools
        else:
            body["prompt"] = prompt
        if self.request_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        endpoint = f"{self.base_url}/{'chat/completions' if chat else 'completions'}"
        try:
            data = self._post(endpoint, body)
            try:
                return self._parse(data, chat, params.n)
            except (AttributeError, KeyError, TypeError, ValueError) as exc:  # JSON of the wrong shape
                raise BackendError(
                    f"{endpoint} returned choices of an unexpected shape ({type(exc).__name__}: {exc}): "
                    f"{str(data)[:200]}. Check that base_url points at an OpenAI-compatible API."
                ) from None
        except BackendError as exc:
            return [Sample(text="", finish_reason="error", has_token_ids=False, error=str(exc)) for _ in range(params.n)]

    def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        delay = self.backoff
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(delay, self.max_backoff))
                delay *= 2
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException:
                last = f"request to {url} timed out after {self.timeout:g} s"
                continue
            except httpx.TransportError as exc:
                last = f"cannot reach {url}: {type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUS:
                last = f"{url} answered HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:
                raise BackendError(
                    f"{url} answered HTTP {response.status_code}: {response.text[:300]} "
                    "(check the model name, the API key in OPENAI_API_KEY and the request fields)."
                )
            try:
                data = response.json()
            except (json.JSONDecodeError, ValueError):
                raise BackendError(
                    f"{url} returned a response that is not valid JSON: {response.text[:200]!r}. "
                    "Check that base_url points at an OpenAI-compatible API (it usually ends in /v1)."
                ) from None
            if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                raise BackendError(f"{url} returned JSON without a 'choices' list: {str(data)[:200]}.")
            return data
        raise BackendError(f"{last} (gave up after {self.max_retries + 1} attempts).")

    @staticmethod
    def _parse(data: dict[str, Any], chat: bool, n: int) -> list[Sample]:
        prompt_ids = data.get("prompt_token_ids") or []
        samples: list[Sample] = []
        for choice in sorted(data["choices"], key=lambda c: c.get("index", 0))[:n]:
            if chat:
                message = choice.get("message") or {}
                text = message.get("content") or ""
                for call in message.get("tool_calls") or []:
                    fn = call.get("function", {})
                    args = fn.get("arguments", "{}")
                    text += f'\n<tool_call>\n{{"name": {json.dumps(fn.get("name", ""))}, "arguments": {args}}}\n</tool_call>'
                content = (choice.get("logprobs") or {}).get("content") or []
                logprobs = [float(t.get("logprob", 0.0)) for t in content]
            else:
                text = choice.get("text") or ""
                logprobs = [float(x) for x in ((choice.get("logprobs") or {}).get("token_logprobs") or []) if x is not None]
            if not isinstance(text, str):
                raise TypeError(f"the completion text is a {type(text).__name__}, not a string")
            ids = list(choice.get("token_ids") or [])
            reason = choice.get("finish_reason") or "stop"
            samples.append(Sample(
                text=text,
                prompt_ids=list(choice.get("prompt_token_ids") or prompt_ids),
                completion_ids=ids,
                logprobs=logprobs,
                finish_reason="length" if reason == "length" else "stop",
                has_token_ids=bool(ids),
            ))
        if len(samples) < n:
            raise BackendError(f"the server returned {len(samples)} choices for n={n}.")
        return samples

"""Generation through any OpenAI-compatible HTTP endpoint (OpenAI, vLLM serve, SGLang, TGI…).

Plain ``httpx``: one request per prompt, at most ``max_concurrency`` in flight, each with a
timeout, retried with exponential backoff on connection errors, timeouts, HTTP 429 and 5xx
(each re-sent timed-out request is logged: the server may still be computing the first one).
Chat prompts go to ``/chat/completions``, strings to ``/completions``. Each prompt's request
carries its own seed (``SamplingParams.seeds``), so a prompt's answer does not depend on the
batch it came in. The API key is read from ``OPENAI_API_KEY`` (or the variable named by
``api_key_env``) unless given.

Messages go out as the chat-completions API accepts them (:func:`~agentgym_suite.llm.openai_wire.wire_messages`);
tool schemas travel in the ``tools`` field, or, with ``tools_in_prompt``, in the system message
in the Hermes format, the model then writing ``<tool_call>`` blocks the env parses. When the
server's prompt count (``usage.prompt_tokens``) is too small to hold the tool schemas sent, a
warning says so once: its chat template dropped them.

Each :class:`~agentgym_suite.llm.base.Sample` keeps what the server said: the assistant
``message`` (``tool_calls`` with the server's ids), ``usage``, the server's ``finish_reason``, and
the ``request`` body sent. Token ids and log-probs are returned when the server sends them
(vLLM does with ``request_token_ids=True``); otherwise they are empty and ``Sample.has_token_ids``
is False. A request that still fails after the retries becomes a ``Sample`` with
``finish_reason="error"`` and the reason in ``error``: one bad request never sinks the batch.

Spec options (``openai:MODEL@URL?timeout=120&concurrency=4``): see :data:`SPEC_OPTIONS` and
:func:`parse_openai_spec`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence
from urllib.parse import parse_qsl

import httpx

from agentgym_suite.llm.base import BackendError, Prompt, Sample, SamplingParams, Tools, check_prompt, normalise_tools
from agentgym_suite.llm.chat_templates import tool_call_text
from agentgym_suite.llm.http_retry import RETRY_STATUS as HTTP_RETRY_STATUS
from agentgym_suite.llm.http_retry import RetryPolicy, post_json_with_retries
from agentgym_suite.llm.openai_wire import TokenEstimate, context_overflow, request_chars, tools_unseen, wire_messages

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT = 600.0
"""Seconds one request attempt may take (the ``openai`` client's default)."""
RETRY_STATUS = HTTP_RETRY_STATUS

SPEC_OPTIONS: dict[str, str] = {
    "timeout": "seconds one request attempt may take (default 600)",
    "max_retries": "extra attempts after a timeout, a connection error, HTTP 429 or 5xx (default 3)",
    "concurrency": "requests in flight at once (default 16)",
    "seed": "on|off: send each request's seed (off for servers that refuse the field)",
    "logprobs": "on|off: ask for log-probabilities (off for servers that refuse the field)",
    "api_key_env": "the environment variable holding the API key (default OPENAI_API_KEY)",
    "header": "Name:value, an extra HTTP header (repeatable)",
    "tools_in_prompt": "on|off: write the tool schemas into the system prompt (Hermes format)",
}
"""Options an ``openai:`` spec takes after ``?`` in its URL, ``&``-separated."""

PASS_THROUGH_QUERY = ("api-version",)
"""Query parameters of a spec's URL that are the server's own (Azure's ``api-version``), sent with every request."""

_SPEC_KWARGS = {"timeout": "timeout", "max_retries": "max_retries", "concurrency": "max_concurrency", "seed": "send_seed",
                "logprobs": "send_logprobs", "api_key_env": "api_key_env", "tools_in_prompt": "tools_in_prompt"}
_SWITCHES = {"on": True, "true": True, "1": True, "yes": True, "off": False, "false": False, "0": False, "no": False}


def parse_openai_spec(rest: str) -> tuple[str, str | None, dict[str, Any]]:
    """Split the part of an ``openai:`` spec after the colon into model, base URL and backend options.

    ``MODEL``, ``MODEL@URL`` or ``MODEL@URL?opt=value&…`` (options: :data:`SPEC_OPTIONS`; the query
    parameters in :data:`PASS_THROUGH_QUERY` stay with the URL).

    Raises:
        ValueError: an empty model or URL, an unknown option or a value of the wrong kind.
    """
    model, at, url = rest.partition("@")
    if not model or (at and not url):
        raise ValueError("openai specs need MODEL or MODEL@BASE_URL")
    base, _, query = url.partition("?")
    options: dict[str, Any] = {}
    passed: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in PASS_THROUGH_QUERY:
            passed[key] = value
        elif key == "header":
            name, sep, text = value.partition(":")
            if not sep or not name.strip():
                raise ValueError(f"header={value!r}: write it as Name:value")
            options.setdefault("headers", {})[name.strip()] = text.strip()
        elif key in ("timeout",):
            options["timeout"] = _number(key, value, float)
        elif key in ("max_retries", "concurrency"):
            options[_SPEC_KWARGS[key]] = _number(key, value, int)
        elif key in ("seed", "logprobs", "tools_in_prompt"):
            if value.lower() not in _SWITCHES:
                raise ValueError(f"{key}={value!r}: use on or off")
            options[_SPEC_KWARGS[key]] = _SWITCHES[value.lower()]
        elif key == "api_key_env":
            options["api_key_env"] = value
        else:
            known = ", ".join(f"{name} ({what})" for name, what in SPEC_OPTIONS.items())
            raise ValueError(f"unknown option {key!r} after '?'; the options are: {known}")
    if passed:
        options["query"] = passed
    return model, (base or None) if at else None, options


def _number(key: str, value: str, kind: type) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{key}={value!r} is not a number") from None


class OpenAIBackend:
    """A :class:`~agentgym_suite.llm.base.Backend` over an OpenAI-compatible server.

    Args:
        model: model name sent in each request.
        base_url: server root including ``/v1`` (default: ``https://api.openai.com/v1``).
        api_key: bearer token; defaults to the variable ``api_key_env`` (may be empty for local servers).
        api_key_env: the environment variable holding the key (default ``OPENAI_API_KEY``; a
            variable named here must be set).
        headers: extra HTTP headers sent with every request.
        timeout: seconds per request attempt.
        max_retries: extra attempts after the first for retryable failures.
        backoff: first retry delay in seconds; doubles each retry (capped at ``max_backoff``).
        max_concurrency: requests in flight at once.
        send_seed: send each request's seed (turn off for servers that refuse ``seed``).
        send_logprobs: ask for log-probabilities (turn off for servers that refuse ``logprobs``).
        tools_in_prompt: write tool schemas into the system message in the Hermes format and send
            no ``tools`` field, for servers whose chat template drops ``tools``.
        request_token_ids: ask the server for prompt/completion token ids (vLLM's
            ``return_token_ids``); leave False for servers that reject unknown fields.
        extra_body: more JSON fields merged into every request.
        query: URL query parameters sent with every request (Azure's ``api-version``).
    """

    supports_token_prompts = False

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_concurrency: int = 16,
        send_seed: bool = True,
        send_logprobs: bool = True,
        tools_in_prompt: bool = False,
        request_token_ids: bool = False,
        extra_body: dict[str, Any] | None = None,
        query: dict[str, str] | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}.")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}.")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout}.")
        if api_key is None and api_key_env:
            if api_key_env not in os.environ:
                raise ValueError(f"the API key variable {api_key_env!r} is not set; export it or name another one.")
            api_key = os.environ[api_key_env]
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_concurrency = max_concurrency
        self.send_seed = send_seed
        self.send_logprobs = send_logprobs
        self.tools_in_prompt = tools_in_prompt
        self.request_token_ids = request_token_ids
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{model}@{self.base_url}"
        self.estimate = TokenEstimate()
        self._context: tuple[bool, int | None] = (False, None)
        self._learned_context: int | None = None
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if self.api_key:
            sent["Authorization"] = f"Bearer {self.api_key}"
        self._client = httpx.Client(
            headers=sent,
            params=dict(query or {}),
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    # ------------------------------------------------------------------ generation
    def generate(
        self,
        prompts: Sequence[Prompt],
        params: SamplingParams,
        tools: Sequence[Tools | None] | None = None,
    ) -> list[list[Sample]]:
        """Send one request per prompt (``max_concurrency`` at a time); ``params.n`` samples each."""
        for prompt in prompts:
            check_prompt(prompt)
        params.check_seeds(len(prompts))
        tool_lists = normalise_tools(prompts, tools)
        jobs = [(p, t, params.seed_for(i)) for i, (p, t) in enumerate(zip(prompts, tool_lists))]
        if len(jobs) <= 1:
            return [self._one(*job, params) for job in jobs]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(jobs))) as pool:
            return list(pool.map(lambda job: self._one(*job, params), jobs))

    # ------------------------------------------------------------------ context
    def context_window(self) -> int | None:
        """The server's context length: ``max_model_len`` of this model in ``/models`` (vLLM reports
        it), or what a context-length error stated; None when unknown. Asked once."""
        with self._lock:
            asked, window = self._context
        if not asked:
            window = None
            for card in self._model_cards() or []:
                if card.get("id") == self.model and isinstance(card.get("max_model_len"), int):
                    window = int(card["max_model_len"])
            with self._lock:
                self._context = (True, window)
        return window if window is not None else self._learned_context

    def count_tokens(self, messages: list[dict[str, Any]], tools: Tools | None = None) -> int:
        """Estimated prompt tokens of a chat request (see :class:`~agentgym_suite.llm.openai_wire.TokenEstimate`)."""
        sent = wire_messages(messages, tools, tools_in_prompt=self.tools_in_prompt)
        return self.estimate.count(sent, None if self.tools_in_prompt else tools)

    def _model_cards(self) -> list[dict[str, Any]] | None:
        try:
            response = self._client.get(f"{self.base_url}/models", timeout=min(self.timeout, 10.0))
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        cards = data.get("data") if isinstance(data, dict) else None
        return [c for c in cards if isinstance(c, dict)] if isinstance(cards, list) else None

    # ------------------------------------------------------------------ one request
    def _body(self, prompt: Prompt, tools: Tools | None, params: SamplingParams, seed: int | None) -> dict[str, Any]:
        chat = not isinstance(prompt, str)
        body: dict[str, Any] = {"model": self.model}
        if chat:
            body["messages"] = wire_messages(list(prompt), tools, tools_in_prompt=self.tools_in_prompt)
            if tools and not self.tools_in_prompt:
                body["tools"] = tools
        else:
            body["prompt"] = prompt
        body.update({"n": params.n, "temperature": params.temperature, "top_p": params.top_p,
                     "max_tokens": params.max_new_tokens})
        if self.send_logprobs:
            body["logprobs"] = True if chat else 1
        if params.stop:
            body["stop"] = list(params.stop)
        if seed is not None and self.send_seed:
            body["seed"] = seed
        if params.json_schema:  # guided decoding where the server supports it (vLLM, SGLang, OpenAI)
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": params.json_schema_name, "strict": True, "schema": json.loads(params.json_schema)}}
        if self.request_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        return body

    def _one(self, prompt: Prompt, tools: Tools | None, seed: int | None, params: SamplingParams) -> list[Sample]:
        chat = not isinstance(prompt, str)
        body = self._body(prompt, tools, params, seed)
        endpoint = f"{self.base_url}/{'chat/completions' if chat else 'completions'}"
        try:
            data = self._post(endpoint, body)
            try:
                samples = self._parse(data, chat, params.n)
            except (AttributeError, KeyError, TypeError, ValueError) as exc:  # JSON of the wrong shape
                raise BackendError(
                    f"{endpoint} returned choices of an unexpected shape ({type(exc).__name__}: {exc}): "
                    f"{str(data)[:200]}. Check that base_url points at an OpenAI-compatible API."
                ) from None
        except BackendError as exc:
            return [Sample(text="", finish_reason="error", has_token_ids=False, error=str(exc), request=body)
                    for _ in range(params.n)]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        if chat and usage and isinstance(usage.get("prompt_tokens"), int):
            self._learn(body, usage["prompt_tokens"])
        for sample in samples:
            sample.usage, sample.request = usage, body
        return samples

    def _learn(self, body: dict[str, Any], prompt_tokens: int) -> None:
        """Calibrate the token estimate, and warn once when the prompt cannot have held the tools."""
        messages, tools = body["messages"], body.get("tools")
        with self._lock:
            self.estimate.observe(request_chars(messages, tools), prompt_tokens, len(messages))
        if tools_unseen(prompt_tokens, messages, tools):
            self._warn_once(
                "tools",
                f"{self.name}: the server counted {prompt_tokens} prompt tokens, too few for the {len(tools or [])} "
                "tool schemas sent: its chat template leaves `tools` out, so the model never sees them. Use "
                "--tools-in-prompt (spec option tools_in_prompt=on) to write them into the system prompt, or serve "
                "the model with a chat template that renders tools.",
            )

    def _warn_once(self, key: str, text: str) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        logger.warning(text)

    def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        policy = RetryPolicy(self.max_retries, backoff=self.backoff, max_backoff=self.max_backoff)

        def warn_timeout(message: str, attempt: int) -> None:
            logger.warning("%s (attempt %d of %d); sending it again, so the server may compute it twice. If the server "
                           "is just slow, raise --request-timeout (spec option timeout=SECONDS).", message, attempt,
                           policy.attempts)

        def refuse(response: httpx.Response) -> BackendError:
            return BackendError(f"{url} answered HTTP {response.status_code}: {response.text[:300]} "
                                f"({self._hint(response.status_code, response.text)}).")

        response = post_json_with_retries(self._client, url, body, policy, timeout_s=self.timeout, refuse=refuse,
                                          on_timeout=warn_timeout)
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

    def _hint(self, status: int, text: str) -> str:
        """What to do about a client error, from its status and text."""
        lowered = text.lower()
        if status == 404:
            served = [str(c.get("id")) for c in self._model_cards() or []]
            if served:
                return f"the server serves {', '.join(served)}; put one of them before the @ in the spec"
            return "check the model name and that the URL ends in /v1"
        if "auto-tool-choice" in lowered or "tool-call-parser" in lowered or "tool choice" in lowered:
            return ("the server does not take tools: start vLLM with --enable-auto-tool-choice --tool-call-parser "
                    "hermes, or pass --tools-in-prompt")
        overflow = context_overflow(text)
        if overflow is not None:
            limit = overflow[0]
            if limit is not None:
                with self._lock:
                    self._learned_context = limit
            return (f"the prompt does not fit the context window{f' of {limit} tokens' if limit else ''}: set "
                    "--max-context-tokens to trim the history")
        if status in (401, 403):
            return "check the API key (OPENAI_API_KEY, or the variable named by --api-key-env)"
        if "seed" in lowered or "logprobs" in lowered:
            return "a server that refuses these fields takes --no-seed / --no-logprobs"
        return "check the model name, the API key in OPENAI_API_KEY and the request fields"

    @staticmethod
    def _parse(data: dict[str, Any], chat: bool, n: int) -> list[Sample]:
        prompt_ids = data.get("prompt_token_ids") or []
        samples: list[Sample] = []
        for choice in sorted(data["choices"], key=lambda c: c.get("index", 0))[:n]:
            received: dict[str, Any] | None = None
            if chat:
                message = choice.get("message") or {}
                content = message.get("content")
                calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
                text = content or ""
                for call in calls:
                    text += "\n" + tool_call_text(call)
                received = {"role": "assistant", "content": content}
                if calls:
                    received["tool_calls"] = calls
                logprob_items = (choice.get("logprobs") or {}).get("content") or []
                logprobs = [float(t.get("logprob", 0.0)) for t in logprob_items]
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
                message=received,
                server_finish_reason=str(reason),
            ))
        if len(samples) < n:
            raise BackendError(f"the server returned {len(samples)} choices for n={n}.")
        return samples

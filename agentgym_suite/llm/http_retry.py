"""One JSON POST with retries, shared by the HTTP backends (:mod:`~agentgym_suite.llm.openai_backend`
and the async LoRA-server backend, :mod:`~agentgym_suite.trainers.async_rollouts.server_backend`).

A timeout, a connection error or an answer whose status is in ``retry_status`` (a busy, overloaded
or restarting server) is sent again after a delay that starts at ``backoff`` seconds and doubles,
capped at ``max_backoff``. Any other answer of HTTP 400 or more is the caller's to explain
(``refuse``); a successful answer is returned as is (the callers parse it). When every attempt
failed, :class:`~agentgym_suite.llm.base.BackendError` says what the last one met and, when it
differs, the server's first error (a server that crashed answers HTTP 500 once, then only
"cannot reach").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import httpx

from agentgym_suite.llm.base import BackendError

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Answers worth sending the request again for: timeouts, conflicts, rate limits, server errors."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently one request is sent."""

    max_retries: int
    """Extra attempts after the first."""
    backoff: float = 1.0
    """Seconds before the first retry; doubles each retry."""
    max_backoff: float = 30.0
    """Longest wait between two attempts."""
    retry_status: frozenset[int] = RETRY_STATUS
    """HTTP statuses retried."""

    @property
    def attempts(self) -> int:
        """Attempts in all."""
        return self.max_retries + 1


def post_json_with_retries(client: httpx.Client, url: str, body: dict[str, Any], policy: RetryPolicy, *,
                           timeout_s: float, refuse: Callable[[httpx.Response], BaseException],
                           on_timeout: Callable[[str, int], None] | None = None,
                           sleep: Callable[[float], None] = time.sleep) -> httpx.Response:
    """POST ``body`` as JSON to ``url`` with ``client``, retrying as ``policy`` says.

    Args:
        timeout_s: the client's timeout (for the message).
        refuse: the exception to raise for an answer of HTTP 400 or more that is not retried.
        on_timeout: called with the message and the attempt number (from 1) after a timeout that
            will be retried (e.g. to warn that the server may compute the request twice).
        sleep: waits between attempts (tests pass their own).

    Returns the first answer below HTTP 400. Raises ``refuse(answer)``, or
    :class:`~agentgym_suite.llm.base.BackendError` when every attempt failed.
    """
    delay = policy.backoff
    last = ""
    first_answer = ""  # the server's own first error: a server that then died leaves only "cannot reach" in `last`
    attempts = policy.attempts
    for attempt in range(attempts):
        if attempt:
            sleep(min(delay, policy.max_backoff))
            delay *= 2
        try:
            response = client.post(url, json=body)
        except httpx.TimeoutException:
            last = f"request to {url} timed out after {timeout_s:g} s"
            if on_timeout is not None and attempt + 1 < attempts:
                on_timeout(last, attempt + 1)
            continue
        except httpx.TransportError as exc:
            last = f"cannot reach {url}: {type(exc).__name__}: {exc}"
            continue
        if response.status_code in policy.retry_status:
            last = f"{url} answered HTTP {response.status_code}: {response.text[:200]}"
            first_answer = first_answer or last
            continue
        if response.status_code >= 400:
            raise refuse(response)
        return response
    first = f"; the server's first error was: {first_answer}" if first_answer and first_answer != last else ""
    raise BackendError(f"{last} (gave up after {attempts} attempt{'s' if attempts > 1 else ''}{first}).")

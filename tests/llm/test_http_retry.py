"""The shared retry loop of the HTTP backends (OpenAI-compatible and the async LoRA server's):
which failures are sent again, how long it waits, what it says when it gives up."""

from __future__ import annotations

import httpx
import pytest

from agentgym_suite.llm.base import BackendError
from agentgym_suite.llm.http_retry import RetryPolicy, post_json_with_retries

URL = "http://server/v1/completions"


def _client(answers: list) -> tuple[httpx.Client, list[dict]]:
    """A client whose n-th request gets ``answers[n]``: a (status, text) pair or an exception to raise."""
    seen: list[dict] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append({"body": request.content})
        answer = answers[len(seen) - 1]
        if isinstance(answer, Exception):
            raise answer
        status, text = answer
        return httpx.Response(status, text=text)

    return httpx.Client(transport=httpx.MockTransport(handle)), seen


def _post(client, policy, **kwargs):
    waits: list[float] = []
    kwargs.setdefault("refuse", lambda response: ValueError(f"refused {response.status_code}"))
    response = post_json_with_retries(client, URL, {"x": 1}, policy, timeout_s=5, sleep=waits.append, **kwargs)
    return response, waits


def test_busy_answers_and_lost_connections_are_sent_again_with_doubling_waits():
    client, seen = _client([(503, "busy"), httpx.ConnectError("refused"), (429, "slow down"), (200, '{"ok": 1}')])
    response, waits = _post(client, RetryPolicy(3, backoff=1.0, max_backoff=3.0))
    assert response.json() == {"ok": 1} and len(seen) == 4
    assert waits == [1.0, 2.0, 3.0]  # doubling, capped at max_backoff


def test_an_answer_that_is_not_retried_is_the_callers_to_explain():
    client, seen = _client([(404, "no such model"), (200, "{}")])
    with pytest.raises(ValueError, match="refused 404"):
        _post(client, RetryPolicy(3))
    assert len(seen) == 1


def test_the_statuses_retried_are_the_policys():
    client, seen = _client([(409, "conflict"), (200, "{}")])
    with pytest.raises(ValueError, match="refused 409"):
        _post(client, RetryPolicy(3, retry_status=frozenset({503})))
    client, seen = _client([(409, "conflict"), (200, "{}")])
    assert _post(client, RetryPolicy(3))[0].status_code == 200 and len(seen) == 2


def test_giving_up_names_the_last_failure_and_the_servers_first_error():
    client, seen = _client([(500, "generator crashed"), httpx.ConnectError("refused"), httpx.ConnectError("refused")])
    with pytest.raises(BackendError) as error:
        _post(client, RetryPolicy(2))
    message = str(error.value)
    assert "cannot reach" in message and "gave up after 3 attempts" in message
    assert "the server's first error was" in message and "generator crashed" in message


def test_a_timeout_is_reported_before_it_is_sent_again_but_not_after_the_last_attempt():
    client, _ = _client([httpx.ReadTimeout("slow"), httpx.ReadTimeout("slow")])
    reported: list[tuple[str, int]] = []
    with pytest.raises(BackendError, match="timed out after 5 s .gave up after 2 attempts"):
        _post(client, RetryPolicy(1), on_timeout=lambda message, attempt: reported.append((message, attempt)))
    assert reported == [(f"request to {URL} timed out after 5 s", 1)]

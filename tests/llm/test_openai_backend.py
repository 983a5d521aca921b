"""OpenAIBackend against a stub OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentgym_suite.llm import SamplingParams
from agentgym_suite.llm.openai_backend import OpenAIBackend

PARAMS = SamplingParams(temperature=0, max_new_tokens=5)


class _Stub(BaseHTTPRequestHandler):
    calls: dict[str, int] = {}
    bodies: list[dict] = []
    headers_seen: list[str] = []

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body["model"]
        _Stub.bodies.append(body)
        _Stub.headers_seen.append(self.headers.get("Authorization", ""))
        _Stub.calls[model] = _Stub.calls.get(model, 0) + 1
        if model == "flaky" and _Stub.calls[model] == 1:
            return self._send(500, b'{"error": "boom"}')
        if model == "slow":
            time.sleep(1.0)
        if model == "malformed":
            return self._send(200, b"<html>not json")
        if model == "denied":
            return self._send(401, b'{"error": "bad key"}')
        if self.path.endswith("/chat/completions"):
            choices = [{
                "index": i,
                "message": {"role": "assistant", "content": f"hi {i}"},
                "logprobs": {"content": [{"token": "hi", "logprob": -0.5}, {"token": " 0", "logprob": -1.0}]},
                "finish_reason": "stop",
                **({"token_ids": [5, 6]} if body.get("return_token_ids") else {}),
            } for i in range(body["n"])]
            payload = {"choices": choices, **({"prompt_token_ids": [1, 2, 3]} if body.get("return_token_ids") else {})}
        else:
            payload = {"choices": [{"index": i, "text": "done", "finish_reason": "length",
                                    "logprobs": {"token_logprobs": [-0.25]}} for i in range(body["n"])]}
        self._send(200, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except BrokenPipeError:  # the client timed out and left
            pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _backend(url: str, model: str, **kwargs) -> OpenAIBackend:
    kwargs.setdefault("backoff", 0.01)
    kwargs.setdefault("timeout", 5.0)
    return OpenAIBackend(model, url, api_key="secret", **kwargs)


def test_retries_after_server_error(server):
    out = _backend(server, "flaky").generate([[{"role": "user", "content": "hi"}]], PARAMS)
    assert _Stub.calls["flaky"] == 2
    assert out[0][0].ok and out[0][0].text == "hi 0"
    assert out[0][0].logprobs == [-0.5, -1.0]
    assert out[0][0].has_token_ids is False and out[0][0].completion_ids == []
    assert _Stub.headers_seen[-1] == "Bearer secret"


def test_timeout_becomes_an_error_sample(server):
    out = _backend(server, "slow", timeout=0.2, max_retries=1).generate(["hi"], PARAMS)
    sample = out[0][0]
    assert sample.finish_reason == "error" and not sample.ok
    assert "timed out" in sample.error and "2 attempts" in sample.error


def test_malformed_json_is_a_clear_error(server):
    sample = _backend(server, "malformed").generate(["hi"], PARAMS)[0][0]
    assert sample.finish_reason == "error"
    assert "not valid JSON" in sample.error and "/v1" in sample.error
    assert _Stub.calls["malformed"] == 1  # not retried


def test_client_error_is_not_retried(server):
    sample = _backend(server, "denied").generate(["hi"], PARAMS)[0][0]
    assert "HTTP 401" in sample.error and "OPENAI_API_KEY" in sample.error
    assert _Stub.calls["denied"] == 1


def test_batch_n_tools_token_ids_and_completions(server):
    backend = _backend(server, "ok", request_token_ids=True, max_concurrency=2)
    tools = [{"type": "function", "function": {"name": "f"}}]
    prompts = [[{"role": "user", "content": str(i)}] for i in range(3)] + ["plain text"]
    out = backend.generate(prompts, SamplingParams(n=2, temperature=0.5, max_new_tokens=4, stop=("\n",), seed=1),
                           tools=[tools, None, None, None])
    assert [len(row) for row in out] == [2, 2, 2, 2]
    assert [s.text for s in out[0]] == ["hi 0", "hi 1"]
    assert out[0][0].completion_ids == [5, 6] and out[0][0].prompt_ids == [1, 2, 3] and out[0][0].has_token_ids
    assert out[3][0].text == "done" and out[3][0].finish_reason == "length" and out[3][0].logprobs == [-0.25]
    sent = [b for b in _Stub.bodies if b["model"] == "ok"]
    with_tools = [b for b in sent if "tools" in b]
    assert len(with_tools) == 1 and with_tools[0]["stop"] == ["\n"] and with_tools[0]["seed"] == 1
    assert any(b.get("prompt") == "plain text" for b in sent)


def test_api_key_comes_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert OpenAIBackend("m", "http://127.0.0.1:9/v1").api_key == "from-env"

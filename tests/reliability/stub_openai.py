"""An OpenAI-compatible stub server on 127.0.0.1, strict like the OpenAI API, that misbehaves on demand.

It plays the box game of ``ReliabilityHang-v0`` (``open box``, then ``take key``) and the lookup
task of ``ReliabilityTools-v0`` (call ``lookup`` with the task id, then answer ``Done.``: as
``tool_calls`` when the request has ``tools``, as ``<tool_call>`` text when the schemas are in the
system prompt). Every request is checked against the chat-completions request schema of the
``openai`` package (:mod:`reliability.openai_schema`) and answered HTTP 400 when it breaks it.

Misbehaviour, per task id found in the prompt (:data:`FAULTS`) or for every request
(:class:`StubState` fields): HTTP 500, a hang until released, a dropped connection, HTTP 404 for
another model name, vLLM's HTTP 400 for ``tools`` without a tool parser, and its HTTP 400 for a
prompt over ``max_model_len`` (reported by ``GET /v1/models``, as vLLM does). Each answer carries
``usage`` (``prompt_tokens`` leave the tools out when ``template_tools`` is False, as a chat
template that drops them does) and every exchange is kept in ``exchanges``.
"""

from __future__ import annotations

import json
import math
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reliability.openai_schema import chat_request_problems, completion_request_problems

FAULTS = {
    "task-1": "http500",  # every attempt answers HTTP 500
    "task-2": "badjson",  # 200 with a body that is not JSON
    "task-3": "slow",  # answers after the client's timeout
    "task-4": "shape",  # JSON whose choices are not objects
    "task-5": "flaky",  # the first attempt of each turn fails, the retry succeeds
}
SLOW_S = 3.0
BOX_ACTIONS = ("open box", "take key", "look")


@dataclass
class Exchange:
    """One request and what the stub answered."""

    path: str
    body: dict[str, Any]
    status: int
    answer: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StubState:
    """Requests seen, and the knobs a test sets.

    Attributes:
        model: the served model name (another one gets HTTP 404).
        max_model_len: context window reported by ``/v1/models`` and enforced (None: none).
        tool_parser: False answers requests with ``tools`` HTTP 400, as vLLM without
            ``--enable-auto-tool-choice --tool-call-parser``.
        template_tools: False leaves the tool schemas out of ``usage.prompt_tokens``.
        seeded: choose box-game actions from the request's seed and prompt (a sampling model).
        report_window: False leaves ``max_model_len`` out of ``/v1/models`` (it is still enforced).
        mode: ``""``, ``"fail"`` (HTTP 500), ``"hang"`` (until ``release`` is set) or ``"drop"``
            (close the connection unanswered), for every chat request.
        box_action: always answer this in the box game (a model that never solves it).
        delay: seconds each answer takes (``max_in_flight`` then shows the client's concurrency).
        faults: task id -> fault (default :data:`FAULTS`; ``{}`` for a healthy server).
        reply: when set, ``reply(body)`` is the text of every chat answer (a test's own model:
            a simulated user, a judge), and any model name is served.
    """

    model: str = "stub"
    max_model_len: int | None = None
    report_window: bool = True
    tool_parser: bool = True
    template_tools: bool = True
    seeded: bool = False
    mode: str = ""
    box_action: str | None = None
    delay: float = 0.0
    faults: dict[str, str] = field(default_factory=lambda: dict(FAULTS))
    reply: Callable[[dict[str, Any]], str] | None = None
    in_flight: int = 0
    max_in_flight: int = 0
    requests: Counter[str] = field(default_factory=Counter)
    exchanges: list[Exchange] = field(default_factory=list)
    invalid: list[list[str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    flaky_failed: set[int] = field(default_factory=set)
    calls: int = 0

    def answered(self, path: str = "/v1/chat/completions") -> list[Exchange]:
        """The exchanges on ``path`` the stub answered with HTTP 200."""
        return [e for e in self.exchanges if e.path == path and e.status == 200]


def _text(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "\n".join(str(m.get("content") or "") for m in body["messages"] if isinstance(m, dict))
    return str(body.get("prompt", ""))


def prompt_tokens(body: dict[str, Any], template_tools: bool = True) -> int:
    """The stub's token count: a token per 4 characters of content, 4 per message, and the tools
    (when its template renders them)."""
    messages = body.get("messages") or []
    chars = len(_text(body)) + sum(len(json.dumps(m.get("tool_calls"))) for m in messages if m.get("tool_calls"))
    if template_tools and body.get("tools"):
        chars += len(json.dumps(body["tools"]))
    return math.ceil(chars / 4) + 4 * len(messages)


def _error(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _answer(state: StubState, body: dict[str, Any], task: str) -> tuple[dict[str, Any], str]:
    """The assistant message for a request, and its finish reason."""
    if state.reply is not None:
        return {"role": "assistant", "content": state.reply(body)}, "stop"
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    system = str(messages[0].get("content") or "") if messages and messages[0].get("role") == "system" else ""
    if body.get("tools") or "<tools>" in system:
        if last.get("role") == "tool" or "<tool_response>" in str(last.get("content") or ""):
            return {"role": "assistant", "content": "Done."}, "stop"
        arguments = json.dumps({"key": task})
        if "tools" not in body:
            return {"role": "assistant", "content": f'<tool_call>\n{{"name": "lookup", "arguments": {arguments}}}\n</tool_call>'}, "stop"
        with state.lock:
            state.calls += 1
            call_id = f"chatcmpl-tool-{state.calls:04d}"
        call = {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": arguments}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    text = _text(body)
    if state.box_action is not None:
        action = state.box_action
    elif state.seeded and body.get("seed") is not None:
        action = random.Random(f"{body['seed']}|{text}").choice(BOX_ACTIONS)
    else:
        action = "take key" if "box opens" in text else "open box"
    return {"role": "assistant", "content": action}, "stop"


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout faults)
                pass

        def _json(self, path: str, body: dict[str, Any], status: int, answer: dict[str, Any]) -> None:
            with state.lock:
                state.exchanges.append(Exchange(path, body, status, answer, dict(self.headers.items())))
            self._send(status, json.dumps(answer).encode())

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                card = {"id": state.model, "object": "model", "owned_by": "stub",
                        "max_model_len": state.max_model_len if state.report_window else None}
                return self._send(200, json.dumps({"object": "list", "data": [card]}).encode())
            self._send(404, json.dumps(_error(f"no route {self.path}", "NotFoundError", 404)).encode())

        def do_POST(self) -> None:
            with state.lock:
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                if state.delay:
                    time.sleep(state.delay)
                self._post()
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _post(self) -> None:
            path = self.path.split("?")[0]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            chat = path.endswith("/chat/completions")
            problems = chat_request_problems(body) if chat else completion_request_problems(body)
            if problems:
                with state.lock:
                    state.invalid.append(problems)
                return self._json(path, body, 400, _error("; ".join(problems), "BadRequestError", 400))
            if body.get("model") != state.model and state.reply is None:
                return self._json(path, body, 404, _error(f"The model `{body.get('model')}` does not exist.",
                                                          "NotFoundError", 404))
            text = _text(body)
            match = re.search(r"(?:task|tool)-\d+", text)
            task = match.group(0) if match else "?"
            with state.lock:
                state.requests[task] += 1
            if state.mode == "fail":
                return self._json(path, body, 500, _error("the engine is dead", "InternalServerError", 500))
            if state.mode == "drop":
                self.close_connection = True
                return
            if state.mode == "hang":
                state.release.wait(60)
            if body.get("tools") and not state.tool_parser:
                return self._json(path, body, 400, _error(
                    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
                    "BadRequestError", 400))
            tokens = prompt_tokens(body, state.template_tools)
            if state.max_model_len is not None and tokens > state.max_model_len:
                return self._json(path, body, 400, _error(
                    f"This model's maximum context length is {state.max_model_len} tokens. However, your prompt "
                    f"contains {tokens} input tokens, which exceeds this limit even without any output tokens. "
                    "Please reduce the length of the input prompt.", "BadRequestError", 400))
            fault = state.faults.get(task, "")
            if fault == "http500":
                return self._send(500, b'{"error": "internal"}')
            if fault == "badjson":
                return self._send(200, b'{"choices": [ this is not json')
            if fault == "slow":
                time.sleep(SLOW_S)
            if fault == "shape":
                return self._send(200, b'{"choices": ["oops", 3]}')
            if fault == "flaky":
                turn = int("box opens" in text)
                with state.lock:
                    first = turn not in state.flaky_failed
                    state.flaky_failed.add(turn)
                if first:
                    return self._send(503, b'{"error": "busy"}')
            message, reason = _answer(state, body, task)
            words = str(message.get("content") or json.dumps(message.get("tool_calls"))).split()
            choice: dict[str, Any] = {"index": 0, "finish_reason": reason}
            if chat:
                choice["message"] = message
                if body.get("logprobs"):
                    choice["logprobs"] = {"content": [{"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []}
                                                      for w in words]}
            else:
                choice["text"] = str(message.get("content") or "")
            usage = {"prompt_tokens": tokens, "completion_tokens": len(words), "total_tokens": tokens + len(words)}
            answer = {"id": f"cmpl-{len(state.exchanges)}", "object": "chat.completion" if chat else "text_completion",
                      "created": int(time.time()), "model": state.model,
                      "choices": [dict(choice, index=i) for i in range(int(body.get("n") or 1))], "usage": usage}
            self._json(path, body, 200, answer)

    return Handler


@contextmanager
def stub_server(**settings: Any) -> Iterator[tuple[str, StubState]]:
    """Run the stub on a free port; yields (base_url ending in /v1, state). ``settings`` set
    :class:`StubState` fields."""
    state = StubState(**settings)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()

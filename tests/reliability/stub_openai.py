"""An OpenAI-compatible stub server on 127.0.0.1 that misbehaves for chosen prompts.

It plays the box game of ``ReliabilityHang-v0`` (``open box``, then ``take key``) and picks
a fault by the task id it finds in the prompt: see :data:`FAULTS`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = {
    "task-1": "http500",  # every attempt answers HTTP 500
    "task-2": "badjson",  # 200 with a body that is not JSON
    "task-3": "slow",  # answers after the client's timeout
    "task-4": "shape",  # JSON whose choices are not objects
    "task-5": "flaky",  # the first attempt of each turn fails, the retry succeeds
}
SLOW_S = 3.0


class StubState:
    """Requests seen per task id (``requests``) and the flaky task's failed attempts."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.flaky_failed: set[int] = set()


def _prompt_text(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "\n".join(str(m.get("content") or "") for m in body["messages"])
    return str(body.get("prompt", ""))


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

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            text = _prompt_text(body)
            match = re.search(r"task-\d+", text)
            task = match.group(0) if match else "?"
            with state.lock:
                state.requests[task] += 1
            fault = FAULTS.get(task, "")
            opened = "box opens" in text
            if fault == "http500":
                return self._send(500, b'{"error": "internal"}')
            if fault == "badjson":
                return self._send(200, b'{"choices": [ this is not json')
            if fault == "slow":
                time.sleep(SLOW_S)
            if fault == "shape":
                return self._send(200, b'{"choices": ["oops", 3]}')
            if fault == "flaky":
                turn = int(opened)
                with state.lock:
                    first = turn not in state.flaky_failed
                    state.flaky_failed.add(turn)
                if first:
                    return self._send(503, b'{"error": "busy"}')
            action = "take key" if opened else "open box"
            message = {"role": "assistant", "content": action}
            choice = {"index": 0, "message": message, "text": action, "finish_reason": "stop"}
            self._send(200, json.dumps({"choices": [choice]}).encode())

    return Handler


@contextmanager
def stub_server() -> Iterator[tuple[str, StubState]]:
    """Run the stub on a free port; yields (base_url ending in /v1, state)."""
    state = StubState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()

"""A server that answers HTTP 500 and then dies: the error keeps the server's own first words,
not only the "connection refused" of the later attempts."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agentgym_suite.llm import SamplingParams
from agentgym_suite.llm.openai_backend import OpenAIBackend

DYING_WORDS = '{"error": {"message": "EngineCore encountered an issue: RuntimeError: generator crashed"}}'


def test_a_500_then_a_dead_server_keeps_the_servers_first_error() -> None:
    class DiesAfterOne(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            data = DYING_WORDS.encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            threading.Thread(target=die, daemon=True).start()  # the engine died with it

    def die() -> None:
        server.shutdown()
        server.server_close()  # the port stops listening: later attempts are refused

    server = ThreadingHTTPServer(("127.0.0.1", 0), DiesAfterOne)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    backend = OpenAIBackend("m", f"http://127.0.0.1:{port}/v1", max_retries=2, backoff=0.5, timeout=5)
    try:
        samples = backend.generate([[{"role": "user", "content": "hi"}]], SamplingParams(max_new_tokens=4))
    finally:
        backend.close()
        thread.join(5)
    error = samples[0][0].error
    assert error is not None
    assert "cannot reach" in error and "gave up after 3 attempts" in error
    assert "the server's first error was" in error and "HTTP 500" in error and "generator crashed" in error

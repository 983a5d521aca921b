"""Weight sync to an OpenAI-compatible vLLM server through LoRA adapter versions loaded by name
(``async_lora_server: URL``).

After every policy version the learner (:class:`LoRAServerWeights`):

1. saves the LoRA adapter (PEFT ``save_pretrained``) to ``<output_dir>/async_lora_adapters/agentgym-policy-v<N>``,
   published with an atomic rename;
2. loads it into the server under the name ``agentgym-policy-v<N>`` (``POST /v1/load_lora_adapter``);
3. only then tells the rollout threads (their :class:`ServedAdapter`) that version N exists, so no
   request ever names an adapter the server does not hold yet;
4. unloads the version that fell out of the window (``POST /v1/unload_lora_adapter``), so the
   server keeps ``max_staleness + 1`` versions live, and deletes the folder of the version unloaded
   one sync earlier.

Which parts are TRL's (``trl.experimental.async_grpo``, the pieces of its ``AsyncGRPOTrainer``
that do the same for its LoRA sync): ``save_lora_adapter`` (step 1), ``VLLMClient``
(``wait_for_server_ready``, ``get_server_info``, ``load_lora_adapter``,
``unload_lora_adapter``), ``select_adapter_sync`` and ``validate_lora_for_vllm_sync`` (the
checks that the server has ``--enable-lora`` with enough ``--max-loras`` and ``--max-lora-rank``
and that the adapter is servable), and the ordering rules: load before the version moves, unload
after, folders outlive their unload by one sync (vLLM resolves ``lora_path`` lazily, and a
request already queued may still read it). What is the suite's: the versions are the trainer's
steps (so names keep counting across a resume), the live window is kept as a list and checked,
failures become errors that say what to change, TRL's merged-weights fallback is refused
instead (that path needs NCCL and a GPU), and no ``/pause`` is sent (a new adapter name does not
disturb requests in flight, so the server keeps generating while the learner publishes).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import warnings
from types import SimpleNamespace
from typing import Any

import torch

logger = logging.getLogger(__name__)

ADAPTER_PREFIX = "agentgym-policy"
"""Adapters are served as ``agentgym-policy-v<version>``; one training run per server."""

ADAPTER_DIR = "async_lora_adapters"
"""The folder under ``output_dir`` the versions are saved to (the server must be able to read it)."""

SERVER_SETUP = ("start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in its environment and `vllm serve MODEL "
                "--enable-lora --max-loras {loras} --max-lora-rank {rank}`")
"""How the server must be started (filled in with the run's numbers)."""


REQUEST_TIMEOUT_S = 600.0
"""Seconds one completions request may take (retried twice on a timeout, as TRL's worker retries)."""


def adapter_name(version: int) -> str:
    """The name policy version ``version`` is served under."""
    return f"{ADAPTER_PREFIX}-v{int(version)}"


def _trl_lora_pieces() -> SimpleNamespace:
    """TRL's LoRA-sync helpers (``trl.experimental`` prints a notice when imported; it is silenced here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from trl.experimental.async_grpo.async_grpo_trainer import save_lora_adapter, select_adapter_sync
        from trl.experimental.async_grpo.async_grpo_trainer import round_lora_rank, validate_lora_for_vllm_sync
        from trl.experimental.async_grpo.vllm_client import VLLMClient
    return SimpleNamespace(save_lora_adapter=save_lora_adapter, select_adapter_sync=select_adapter_sync,
                           round_lora_rank=round_lora_rank, validate=validate_lora_for_vllm_sync, VLLMClient=VLLMClient)


class ServedAdapter:
    """A rollout thread's view of the served versions: the version it generates with now, and the
    newest the learner has loaded (taken at the boundary the thread chooses, as
    :class:`~agentgym_suite.trainers.async_rollouts.policy_snapshot.PolicySnapshot` takes weights)."""

    model = None
    """No copy of the policy: the server holds the weights."""

    def __init__(self, version: int) -> None:
        self.version = int(version)
        self.published = int(version)
        """The newest version loaded into the server (taken or not)."""
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The adapter name requests are sent with now."""
        return adapter_name(self.version)

    def offer(self, _weights: Any, version: int) -> None:
        """The learner loaded ``version`` into the server."""
        with self._lock:
            self.published = int(version)

    def apply_pending(self) -> bool:
        """Generate with the newest loaded version from now on; returns whether the version changed."""
        with self._lock:
            changed, self.version = self.published != self.version, self.published
        return changed


class LoRAServerWeights:
    """The learner's side of the server weight sync: publishes each version as an adapter and keeps
    ``max_staleness + 1`` of them live.

    Args:
        args: the trainer's config (``async_lora_server``, ``max_staleness``, ``output_dir``,
            ``vllm_server_timeout``, ``lora_r``).
        client: a TRL ``VLLMClient`` (default: one for ``args.async_lora_server``); tests pass their own.
    """

    def __init__(self, args: Any, client: Any = None) -> None:
        self.args = args
        self.base_url = str(args.async_lora_server).rstrip("/")
        self.max_staleness = int(args.max_staleness)
        self.directory = os.path.abspath(os.path.join(args.output_dir, ADAPTER_DIR))
        self.trl = _trl_lora_pieces()
        timeout = float(getattr(args, "vllm_server_timeout", 240.0) or 240.0)
        self.client = client if client is not None else self.trl.VLLMClient(self.base_url, server_timeout=timeout)
        self.live: list[int] = []
        """Versions loaded into the server by this run, oldest first (at most ``max_staleness + 1``
        between publishes)."""
        self._unloaded_folders: list[str] = []
        self._info: dict[str, Any] | None = None
        self.logprobs_check = ""
        """How the server's log-prob mode was judged at start (``logprobs_probe.check_logprobs_mode``)."""
        self.sync_seconds: list[float] = []
        """Wall time of each publish (save + load + unload), for the step metrics."""

    # ------------------------------------------------------------------ start and checks
    def start(self, policy: torch.nn.Module, version: int, threads: int) -> list[ServedAdapter]:
        """Check the server and the policy, clear what an earlier run left on the server, publish
        ``version`` and return one :class:`ServedAdapter` per rollout thread."""
        self.check(policy)
        self._unload_leftovers()
        self.publish(policy, version, [])
        try:
            self.check_logprobs(policy, version)
        except RuntimeError:
            self.close()  # nothing of this run stays on the server
            raise
        return [ServedAdapter(version) for _ in range(int(threads))]

    def check_logprobs(self, policy: torch.nn.Module, version: int) -> str:
        """Refuse a server whose log-probs are raw while the run samples at a temperature other than 1
        (:mod:`~agentgym_suite.trainers.async_rollouts.logprobs_probe`); returns how it was decided."""
        import httpx

        from agentgym_suite.llm.http_retry import RetryPolicy, post_json_with_retries
        from agentgym_suite.trainers.async_rollouts.logprobs_probe import check_logprobs_mode

        temperature = getattr(self.args, "temperature", None)
        temperature = 1.0 if temperature is None or float(temperature) <= 0 else float(temperature)
        url = f"{self.base_url}/v1/completions"

        def post(body: dict[str, Any]) -> dict[str, Any]:
            with httpx.Client(timeout=60.0) as client:
                answer = post_json_with_retries(
                    client, url, body, RetryPolicy(1), timeout_s=60.0,
                    refuse=lambda r: RuntimeError(f"{url} answered HTTP {r.status_code}: {r.text[:200]}"))
            return answer.json()

        vocab = int(getattr(getattr(policy, "config", None), "vocab_size", 0) or 0) or 32
        prompt = [i % vocab for i in range(1, 9)]
        self.logprobs_check = check_logprobs_mode(temperature, self._info, post, adapter_name(version), prompt,
                                                  self.base_url)
        return self.logprobs_check

    def check(self, policy: torch.nn.Module) -> None:
        """Raise ``ValueError``/``RuntimeError`` with what to change when the policy is not a servable
        LoRA adapter or the server cannot load adapters at run time."""
        from peft import PeftModel

        if not isinstance(policy, PeftModel):
            raise ValueError("async_lora_server publishes every policy version to the server as a LoRA adapter, but "
                             f"the policy is a {type(policy).__name__}, not a PEFT LoRA model: set lora_r (e.g. 8), or "
                             "leave async_lora_server unset to generate in process.")
        config = self.trl.validate(policy)  # one LoRA adapter, nothing vLLM's adapter format cannot carry
        rank = max([int(config.r), *[int(r) for r in (config.rank_pattern or {}).values()]])
        setup = SERVER_SETUP.format(loras=self.max_staleness + 2, rank=self.trl.round_lora_rank(rank))
        try:
            self.client.wait_for_server_ready()
        except TimeoutError as exc:
            raise RuntimeError(f"async_lora_server: no vLLM server answers at {self.base_url} ({exc}); {setup}.") from None
        info = self._info = self._server_info()
        if info is None:
            logger.warning("async_lora_server: %s does not report its configuration (/server_info needs "
                           "VLLM_SERVER_DEV_MODE=1), so --enable-lora, --max-loras and --max-lora-rank cannot be "
                           "checked before the first load; %s.", self.base_url, setup)
            return
        try:
            servable = self.trl.select_adapter_sync(info, policy, self.args)
        except ValueError as exc:  # too low --max-loras or --max-lora-rank
            raise ValueError(f"async_lora_server: {exc}") from None
        if not servable:
            raise RuntimeError(f"async_lora_server: the vLLM server at {self.base_url} cannot serve the policy as "
                               "LoRA adapters (it was started without --enable-lora, or with --data-parallel-size > "
                               f"1, where a loaded adapter reaches one replica only; the warning above says which); "
                               f"{setup}.")

    def _server_info(self) -> dict[str, Any] | None:
        try:
            return self.client.get_server_info()
        except Exception:  # noqa: BLE001 - an older server or one without dev mode: checked by the first load instead
            return None

    def _unload_leftovers(self) -> None:
        """Unload the ``agentgym-policy-v*`` adapters an earlier (killed) run left loaded, so names can
        be loaded again and the server's adapter slots are free."""
        import httpx

        try:
            cards = httpx.get(f"{self.base_url}/v1/models", timeout=30.0).json().get("data") or []
        except Exception:  # noqa: BLE001 - a server without /v1/models still works; loads say what is wrong
            return
        for card in cards:
            name = str(card.get("id", "")) if isinstance(card, dict) else ""
            if name.startswith(f"{ADAPTER_PREFIX}-v"):
                logger.warning("async_lora_server: unloading %s, left on the server by an earlier run.", name)
                self.client.unload_lora_adapter(name)

    # ------------------------------------------------------------------ each version
    def publish(self, policy: torch.nn.Module, version: int, adapters: list[ServedAdapter]) -> None:
        """Save ``version``'s adapter, load it into the server, tell the threads, then unload the
        version that fell out of the ``max_staleness + 1`` window."""
        began = time.monotonic()
        version = int(version)
        name = adapter_name(version)
        folder = os.path.join(self.directory, name)
        os.makedirs(self.directory, exist_ok=True)
        for folder_gone in self._unloaded_folders:  # unloaded one sync ago: no queued request reads it any more
            shutil.rmtree(folder_gone, ignore_errors=True)
        self._unloaded_folders = []
        adapter = policy.active_adapters[0]
        device = next(policy.parameters()).device
        one_process = SimpleNamespace(device=device, is_main_process=True)  # async_rollouts runs in one process
        self.trl.save_lora_adapter(policy, one_process, adapter, folder)
        self._load(name, folder)
        self.live.append(version)
        for thread_adapter in adapters:  # only now may a request name it
            thread_adapter.offer(None, version)
        while len(self.live) > self.max_staleness + 1:
            old = self.live.pop(0)
            self.client.unload_lora_adapter(adapter_name(old))
            self._unloaded_folders.append(os.path.join(self.directory, adapter_name(old)))
        self.sync_seconds.append(time.monotonic() - began)

    def _load(self, name: str, folder: str) -> None:
        try:
            self.client.load_lora_adapter(name, folder)
            return
        except RuntimeError as exc:  # TRL's client: the server has no /v1/load_lora_adapter route
            raise RuntimeError(f"async_lora_server: {exc} ({self._setup_hint()}).") from None
        except Exception as exc:  # noqa: BLE001 - TRL's client raises a bare Exception with the server's answer
            text = str(exc)
        if "already been loaded" in text:  # a name left by an earlier run that /v1/models did not list
            self.client.unload_lora_adapter(name)
            try:
                self.client.load_lora_adapter(name, folder)
                return
            except Exception as exc:  # noqa: BLE001
                text = str(exc)
        raise RuntimeError(f"async_lora_server: the vLLM server at {self.base_url} could not load the policy adapter "
                           f"{name} from {folder}: {text[:400]}. The server must read that folder (same machine or "
                           f"shared filesystem) and {self._setup_hint()}.")

    def _setup_hint(self) -> str:
        rank = self.trl.round_lora_rank(int(getattr(self.args, "lora_r", 8) or 8))
        return SERVER_SETUP.format(loras=self.max_staleness + 2, rank=rank)

    def backend(self, adapter: ServedAdapter, tokenizer: Any, args: Any, generation_kwargs: dict[str, Any]) -> Any:
        """The thread's backend: completions from the adapter ``adapter`` names (``generation_kwargs``,
        the transformers ``GenerationConfig`` extras, have no server equivalent and are refused)."""
        from agentgym_suite.trainers.async_rollouts.server_backend import ServedAdapterBackend
        from agentgym_suite.trainers.generation import template_kwargs

        if generation_kwargs:
            raise ValueError(f"async_lora_server samples on the server with temperature, top_p, top_k, min_p, "
                             f"repetition_penalty and max_completion_length only; generation_kwargs "
                             f"{sorted(generation_kwargs)} have no server equivalent here. Remove them.")
        eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        return ServedAdapterBackend(self.base_url, adapter, tokenizer, eos, chat_template_kwargs=template_kwargs(args),
                                    timeout=REQUEST_TIMEOUT_S)

    def metrics(self) -> dict[str, float]:
        """Per step: the versions live on the server and the seconds the last publish took."""
        out = {"async/server_adapters_live": float(len(self.live))}
        if self.sync_seconds:
            out["async/weight_sync_s"] = self.sync_seconds[-1]
        return out

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        """Unload every version this run loaded and delete the adapter folders (the rollout threads
        have stopped; the trainer saves the final adapter itself)."""
        for version in self.live:
            try:
                self.client.unload_lora_adapter(adapter_name(version))
            except Exception as exc:  # noqa: BLE001 - a server already gone: nothing left to unload
                logger.warning("async_lora_server: could not unload %s: %s", adapter_name(version), exc)
        self.live = []
        self._unloaded_folders = []
        shutil.rmtree(self.directory, ignore_errors=True)

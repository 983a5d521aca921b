"""Asynchronous rollouts on a real ``vllm serve`` (the CPU build) through LoRA adapter versions
loaded by name (``async_lora_server``): two async steps, the versions advance, the server holds at
most ``max_staleness + 1`` of them, every trained turn came from the adapter of its recorded
version within the staleness bound, and vLLM's sampling log-probs agree with the learner's on the
same weights, at temperature 1 on vLLM's default log-probs and at 0.7 with
``--logprobs-mode processed_logprobs``. Slow, and only where an interpreter with vLLM is named by
``AGENTGYM_VLLM_PYTHON`` (see ``test_vllm_cpu.py`` for how to build one); the trainer runs in the
test's own interpreter.

The server is started as the docs say (``docs/training.md``, "Asynchronous training")::

    VLLM_ALLOW_RUNTIME_LORA_UPDATING=True VLLM_SERVER_DEV_MODE=1 VLLM_CPU_KVCACHE_SPACE=1 \\
        python -m vllm.entrypoints.openai.api_server --model MODEL --dtype float32 \\
        --enable-lora --max-loras 3 --max-lora-rank 8

(the ``vllm`` console script of the ``vllm-cpu`` distribution fails to find its own version, so
the module is started directly). The model is ``vllm_cpu_worker.build_model``'s: the suite's
tiny tokenizer on a random Qwen2 whose attention heads the CPU kernels support.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from trainers.test_multiprocess import ROOT, free_port
from trainers.test_vllm_cpu import vllm_python

pytestmark = pytest.mark.slow

MAX_STALENESS = 1
SERVER_START_S = 900.0


def _start_server(python: str, model: str, port: int, log: Path, logprobs_mode: str | None = None,
                  dev_mode: bool = True) -> subprocess.Popen:
    """``vllm serve`` as the docs say; ``logprobs_mode``: its ``--logprobs-mode`` (None: vLLM's default,
    raw), ``dev_mode``: ``VLLM_SERVER_DEV_MODE=1`` (``/server_info``)."""
    env = {**os.environ, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True", "VLLM_CPU_KVCACHE_SPACE": "1",
           "OMP_NUM_THREADS": "2", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": ""}
    if dev_mode:
        env["VLLM_SERVER_DEV_MODE"] = "1"
    else:
        env.pop("VLLM_SERVER_DEV_MODE", None)
    cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port),
           "--host", "127.0.0.1", "--max-model-len", "2048", "--dtype", "float32", "--enable-lora",
           "--max-loras", str(MAX_STALENESS + 2), "--max-lora-rank", "8"]
    if logprobs_mode:
        cmd += ["--logprobs-mode", logprobs_mode]
    with log.open("w") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_ready(proc: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"vllm serve exited with {proc.returncode}:\n{log.read_text()[-6000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(3)
    pytest.fail(f"vllm serve was not ready after {SERVER_START_S:.0f} s:\n{log.read_text()[-6000:]}")


def _stop_server(proc: subprocess.Popen) -> None:
    """Stop the server and everything it started (its own session)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _served_adapters(url: str) -> list[str]:
    cards = httpx.get(f"{url}/v1/models", timeout=30).json()["data"]
    return sorted(c["id"] for c in cards if str(c["id"]).startswith("agentgym-policy-v"))


def _served_logprobs(url: str, adapter: str, ids: list[int]) -> list[float]:
    """vLLM's log-probs of ``ids[1:]`` under ``adapter`` (``prompt_logprobs``)."""
    body = {"model": adapter, "prompt": ids, "max_tokens": 1, "temperature": 1.0, "prompt_logprobs": 0}
    choice = httpx.post(f"{url}/v1/completions", json=body, timeout=120).json()["choices"][0]
    return [float(entry[str(token)]["logprob"]) for entry, token in zip(choice["prompt_logprobs"][1:], ids[1:])]


def _learner_logprobs(policy, ids: list[int]) -> list[float]:
    import torch

    with torch.no_grad():
        logits = policy(input_ids=torch.tensor([ids])).logits[0, :-1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()


@pytest.mark.parametrize("temperature, logprobs_mode, check", [
    (1.0, None, "not needed"),  # vLLM's default raw log-probs are the sampled distribution's at temperature 1
    (0.7, "processed_logprobs", "reported"),  # elsewhere the server must return them after temperature
])
def test_two_async_steps_on_vllm_serve_with_lora_versions(tmp_path, temperature, logprobs_mode, check):
    python = vllm_python()
    if python is None:
        pytest.skip("no interpreter with vLLM: set AGENTGYM_VLLM_PYTHON (e.g. a venv with vllm-cpu and trl)")
    from agentgym_suite.trainers import AgentGRPOTrainer
    from agentgym_suite.trainers.async_rollouts.lora_server import adapter_name
    from trainers.conftest import tiny_config
    from trainers.fake_env import make_letter_env
    from trainers.vllm_cpu_worker import build_model

    model = build_model(tmp_path / "model")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "vllm_serve.log"
    proc = _start_server(python, model, port, log, logprobs_mode=logprobs_mode)
    try:
        _wait_ready(proc, url, log)
        args = tiny_config(str(tmp_path / "run"), model_name_or_path=model, max_steps=2, max_turns=3,
                           max_completion_length=8, lora_r=8, async_rollouts=True, async_lora_server=url,
                           max_staleness=MAX_STALENESS, async_correction="tis", print_step_times=False,
                           vllm_server_timeout=60.0, temperature=temperature)
        trainer = AgentGRPOTrainer(args=args, env_factory=lambda: make_letter_env(horizon=3))
        hooks = trainer._async
        served: list[tuple[int, list[str]]] = []
        publish = hooks.weights.publish

        probe = trainer.processing_class.encode("You need the letter a. say a", add_special_tokens=False)
        probes: list[tuple[list[float], list[float]]] = []

        def recording_publish(policy, version, adapters):
            publish(policy, version, adapters)
            served.append((int(version), _served_adapters(url)))  # what the server holds right after
            # the served adapter is this version's weights: vLLM scores a fixed text as the learner does
            probes.append((_served_logprobs(url, adapter_name(version), probe), _learner_logprobs(policy, probe)))

        hooks.weights.publish = recording_publish
        trained: list[list] = []
        take = hooks.rollout_phase

        def recording_take(*a, **k):
            episodes, taken = take(*a, **k)
            trained.append(list(episodes))
            return episodes, taken

        hooks.rollout_phase = recording_take
        gaps: list[float] = []
        correct = hooks.correct

        def recording_correct(advantages, learner, generator, mask):
            keep = mask.bool()
            gaps.append(float((learner.float() - generator.float())[keep].abs().max()))
            return correct(advantages, learner, generator, mask)

        hooks.correct = recording_correct
        trainer.train()
        left_over = _served_adapters(url)
    finally:
        _stop_server(proc)

    assert trainer.state.global_step == 2
    assert hooks.weights.logprobs_check == check  # the start-up check of the server's --logprobs-mode
    logged = [h["async/policy_version"] for h in trainer.state.log_history if "async/policy_version" in h]
    assert logged == [0.0, 1.0]
    # versions advance: the start version and one per step, each served right after its publish, and the
    # server never holds more than max_staleness + 1 of them
    assert [v for v, _ in served] == [0, 1, 2]
    for version, names in served:
        assert names == sorted(adapter_name(v) for v in range(max(0, version - MAX_STALENESS), version + 1))
    assert left_over == []  # unloaded at the end
    assert len(trained) == 2
    for step, episodes in enumerate(trained):
        assert episodes
        for episode in episodes:
            for turn in episode.turns:
                assert 0 <= step - turn.policy_version <= MAX_STALENESS  # the staleness bound holds
                assert turn.request["model"] == adapter_name(turn.policy_version)
                assert turn.request["temperature"] == pytest.approx(temperature)
                assert turn.completion_ids and len(turn.logprobs) == len(turn.completion_ids)
                assert all(math.isfinite(x) and x <= 0.0 for x in turn.logprobs)
    probe_gaps = [max(abs(a - b) for a, b in zip(on_server, in_learner)) for on_server, in_learner in probes]
    moved = max(abs(a - b) for a, b in zip(probes[0][0], probes[-1][0]))
    print(f"served vs learner log-probs, max gap per version: {probe_gaps}; v0 -> v2 moved {moved:.4f}")
    assert len(probe_gaps) == 3 and max(probe_gaps) < 1e-3
    assert moved > 1e-3  # and the versions differ: the server really swapped adapters
    # step 0 trains on version-0 samples with version-0 weights: vLLM's log-probs of the sampled tokens
    # are the learner's (the adapter starts as a zero delta; fp32 on both sides), at temperature 0.7 too,
    # where the learner divides the logits by it and the server returns processed log-probs
    assert gaps and gaps[0] < 0.05, gaps
    print(f"max |learner - vLLM| log-prob per step: {gaps}")

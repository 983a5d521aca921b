"""Several optimizer updates per generation batch under DeepSpeed ZeRO-2, ZeRO-3 and FSDP2, on CPU.

Two processes (gloo), started as a user starts them: ``accelerate launch`` with a DeepSpeed config
(``DS_ACCELERATOR=cpu``) or ``torchrun`` with FSDP2 (accelerate leaves FSDP off on a CPU-only
machine and would train unsynchronised copies, so the worker shards with ``fully_shard`` itself and
reports whether every parameter is sharded). Each runs one generation batch of six micro-batches
of four rows per process that ends nine updates, most of them inside a micro-batch, two in one
micro-batch, in passes of at most three rows (``rows_per_update``'s planner and
``UpdateSteps``, as the trainer runs them: ``engine_update_worker.py``); its weights must equal a
one-process run of the same schedule that sees every row.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trainers import engine_update_worker

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "engine_update_worker.py"
ENDS = "2,3,4,6,10,13,17,22"
"""Updates end after these of a process's 24 rows and after the last: nine optimizer steps for six
micro-batches of four rows (boundaries at rows 4, 8, ...: one update ends with a micro-batch, the
others inside one, the last micro-batch's included)."""
UPDATES = 9
TOLERANCE = 1e-6
"""Largest parameter difference from the one-process run (fp32; sums reduced in another order: ~3e-8 seen)."""



def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "OMP_NUM_THREADS": "1", "DS_ACCELERATOR": "cpu", "ENGINE_WORKER_DUMP_AFTER": "300"}


def _deepspeed_launch_config(stage: int, folder: Path) -> Path:
    """An accelerate config for two CPU processes under ZeRO-``stage`` (configs/accelerate/zero3.yaml
    with use_cpu, fp32 and a DeepSpeed file that sets gradient_clipping, which DeepSpeed 0.19.8 would
    default to 1.0, and shards even a tiny model's parameters: stage3_param_persistence_threshold 0)."""
    ds = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 6, "gradient_clipping": 1.0,
          "zero_optimization": {"stage": stage, "stage3_param_persistence_threshold": 0},
          "zero_force_ds_cpu_optimizer": False, "bf16": {"enabled": False}, "fp16": {"enabled": False}}
    (folder / f"ds{stage}.json").write_text(json.dumps(ds))
    launch = folder / f"zero{stage}.yaml"
    launch.write_text("\n".join([
        "compute_environment: LOCAL_MACHINE", "distributed_type: DEEPSPEED", "deepspeed_config:",
        f"  deepspeed_config_file: {folder / f'ds{stage}.json'}", "  deepspeed_multinode_launcher: standard",
        "  zero3_init_flag: false", "machine_rank: 0", "main_training_function: main", "num_machines: 1",
        "num_processes: 2", "rdzv_backend: static", "same_network: true", "use_cpu: true", ""]))
    return launch


def _run(engine: str, folder: Path, ends: str = ENDS) -> dict:
    out = folder / "out"
    worker = [str(WORKER), "--engine", engine, "--out", str(out), "--ends", ends]
    if engine == "reference":  # one plain process: run here
        engine_update_worker.main(worker[1:])
        return json.loads((out / "reference.json").read_text())
    if engine == "fsdp2":
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                   "--master_port", str(_free_port()), *worker]
    else:
        launch = _deepspeed_launch_config(int(engine[-1]), folder)
        command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(launch),
                   "--main_process_port", str(_free_port()), *worker]
    proc = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=500, cwd=ROOT)
    result = out / f"{engine}.json"
    # FSDP2 processes now and then abort at exit after finishing: rank 0's results decide, not the exit code
    assert result.exists(), f"{engine}: no results (exit {proc.returncode})\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return json.loads(result.read_text())


def _largest_difference(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float((torch.tensor(a[n]) - torch.tensor(b[n])).abs().max()) for n in a)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _run("reference", tmp_path_factory.mktemp("reference"))


def test_the_reference_takes_nine_updates_that_matter(reference: dict, tmp_path: Path) -> None:
    assert reference["steps"] == UPDATES and reference["processes"] == 1
    one_update = _run("reference", tmp_path, ends="")
    assert one_update["steps"] == 1
    assert _largest_difference(reference["weights"], one_update["weights"]) > 1e-3  # the schedule shows in the weights


@pytest.mark.timeout(900)
@pytest.mark.parametrize("engine", ["zero2", "zero3", "fsdp2"])
def test_several_updates_per_generation_batch_equal_one_process(engine: str, reference: dict, tmp_path: Path) -> None:
    if engine.startswith("zero"):
        pytest.importorskip("deepspeed", reason="the deepspeed extra (make install) runs ZeRO on CPU")
    result = _run(engine, tmp_path)
    assert result["processes"] == 2
    assert result["sharded"], f"{engine}: parameters (ZeRO-2: optimizer state) were not sharded over the processes"
    assert result["steps"] == UPDATES, f"{engine}: {result['steps']} optimizer steps for {UPDATES} updates"
    assert _largest_difference(result["weights"], reference["weights"]) <= TOLERANCE

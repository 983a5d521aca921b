"""``AgentGRPOTrainer`` itself under DeepSpeed ZeRO-2/3 and FSDP2: several optimizer updates per
generation batch, two CPU processes over gloo, started as a user starts them.

ZeRO-3 and ZeRO-2: ``DS_ACCELERATOR=cpu accelerate launch --config_file configs/accelerate/zero3_cpu.yaml``
(resp. ``zero2_cpu.yaml``). FSDP2: ``accelerate launch --config_file configs/accelerate/fsdp2_cpu.yaml``,
where accelerate alone would leave FSDP off on a CPU-only machine and the trainer turns its FSDP2 path
on (``agentgym_suite/trainers/fsdp2.py``), and ``torchrun`` with the ``fsdp`` training arguments.
Each run (``engine_trainer_worker.py``) plays one generation batch of the letter env with the
tests' tiny random Qwen2 and its locally trained tokenizer: 2 micro-batches of up to 8 rows per
process and ``rows_per_update: 2``, so verl's schedule ends 3-8 updates in it, most inside a
micro-batch. Checked from each rank's results, not the exit code (FSDP2 processes now and then
abort at exit after finishing): the optimizer took exactly verl-agent's number of steps, the
parameters (ZeRO-2: the optimizer state) were sharded, both ranks planned the same updates and end
with the same weights and losses, every loss and weight is finite, and ``save_model`` writes the
trained weights whole (FSDP2 needs ``fsdp_state_dict_type: FULL_STATE_DICT`` for that, ZeRO-3
``stage3_gather_16bit_weights_on_model_save``; with a sharded state dict it wrote nothing).

The reference is not a one-process run: with real rollouts it cannot be one. One process playing
both processes' tasks samples its batch of prompts in one generation call (other random draws, other
episodes), and verl's schedule cuts each process's rows into mini-batches, so an update of a
two-process run holds rows of both processes that one process would put in different updates.
What pins the numbers instead: the engines agree with each other, ZeRO-3 with FSDP2 in the default
suite, and ZeRO-2/3 and FSDP2 with the plain two-process DDP run (whose updates are
:func:`verl_updates.step_optimizer`'s) in the slow set, within :data:`TOLERANCE`. The runs share
the rollouts (same seed, same starting weights; the logged losses agree to 1e-5),
and the schedule moves the weights by far more than that. Equality with one process on the same
rows is shown by ``test_engine_updates.py``'s harness, which drives the same planner and
``UpdateSteps`` under the same engines.
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

from agentgym_suite.trainers.verl_updates import updates_for

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "engine_trainer_worker.py"
CONFIGS = ROOT / "configs" / "accelerate"
TOLERANCE = 1e-4
"""Largest parameter difference between engines after the batch's updates (fp32, AdamW at lr 1e-2;
sums reduced in other orders, which AdamW's normalisation amplifies for near-zero gradients such as
the key biases': up to 1.7e-5 seen)."""
LAUNCH_TIMEOUT = 600
"""Seconds for one two-process run (a first DeepSpeed run on a machine also builds its CPU
communication op, about three minutes on two cores)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command(engine: str) -> list[str]:
    """How a user starts ``engine`` with two processes."""
    port = str(_free_port())
    if engine in ("ddp", "fsdp2_torchrun"):
        return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", port]
    config = {"zero2": "zero2_cpu.yaml", "zero3": "zero3_cpu.yaml", "fsdp2": "fsdp2_cpu.yaml"}[engine]
    return [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(CONFIGS / config),
            "--num_processes", "2", "--main_process_port", port]


def run_engine(engine: str, folder: Path) -> list[dict]:
    """Both ranks' results of one generation batch under ``engine``."""
    if engine.startswith("zero"):
        pytest.importorskip("deepspeed", reason="the deepspeed extra (make install) runs ZeRO on CPU")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "ENGINE_WORKER_DUMP_AFTER": str(LAUNCH_TIMEOUT - 60)}
    if engine.startswith("zero"):
        env["DS_ACCELERATOR"] = "cpu"
    command = [*_command(engine), str(WORKER), "--engine", engine, "--out", str(folder)]
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=LAUNCH_TIMEOUT, cwd=ROOT)
        code, tail = proc.returncode, proc.stderr[-5000:]
    except subprocess.TimeoutExpired as exc:
        code, tail = "timeout", (exc.stderr or b"")[-5000:]
    results = [folder / f"{engine}-rank{r}.json" for r in range(2)]
    # the ranks' results decide, not the exit code (an FSDP2 process may abort at exit after writing them)
    assert all(r.exists() for r in results), f"{engine}: no results from every rank (exit {code})\n{tail}"
    return [json.loads(r.read_text()) for r in results]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """``runs(engine)``: that engine's results, launched once per module."""
    done: dict[str, list[dict]] = {}

    def get(engine: str) -> list[dict]:
        if engine not in done:
            done[engine] = run_engine(engine, tmp_path_factory.mktemp(engine))
        return done[engine]

    return get


def _weights(result: dict) -> dict[str, torch.Tensor]:
    return {n: torch.tensor(v) for n, v in result["weights"].items()}


def _largest_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max(float((a[n] - b[n]).abs().max()) for n in a)


def _starting_weights() -> dict[str, torch.Tensor]:
    from transformers import AutoModelForCausalLM

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir())
    return {n: p.detach().float() for n, p in model.named_parameters()}


ENGINE_TYPES = {"zero2": "DEEPSPEED", "zero3": "DEEPSPEED", "fsdp2": "FSDP", "fsdp2_torchrun": "FSDP"}


@pytest.mark.timeout(2 * LAUNCH_TIMEOUT)
@pytest.mark.parametrize("engine", ["zero3", "fsdp2",
                                    pytest.param("zero2", marks=pytest.mark.slow),
                                    pytest.param("fsdp2_torchrun", marks=pytest.mark.slow)])
def test_the_trainer_takes_verls_updates_sharded_and_in_lockstep(engine: str, runs) -> None:
    first, second = runs(engine)
    for rank in (first, second):
        assert rank["processes"] == 2 and rank["distributed_type"].endswith(ENGINE_TYPES[engine])
        assert rank["generation_batches"] == 1 and len(rank["planned"]) == 1
        assert rank["sharded"], f"{engine}: parameters (ZeRO-2: optimizer state) not sharded over the processes"
        assert rank["finite"], f"{engine}: a loss or a weight is not finite: {rank['losses']}"
        # verl-agent's ceil(rows / rows_per_update) updates, more than the micro-batches, each one optimizer step
        expected = updates_for(rank["rows"][0], rank["rows_per_update"], processes=2)
        assert rank["planned"] == [expected] and expected >= 3 and expected > rank["micro_batches"]
        assert rank["optimizer_steps"] == expected, f"{engine}: {rank['optimizer_steps']} steps for {expected} updates"
    # the model saved at the end (as `agentgym train` saves it) is the trained one, whole
    assert first["saved_difference"] is not None, f"{engine}: save_model wrote no model.safetensors"
    assert first["saved_missing"] == [] and first["saved_difference"] == 0.0
    # lockstep: the same plan, the same losses and the same weights on both processes
    assert first["planned"] == second["planned"] and first["rows"] == second["rows"]
    assert first["losses"] == second["losses"] and first["weights_sum"] == second["weights_sum"]


@pytest.mark.timeout(3 * LAUNCH_TIMEOUT)
def test_zero3_and_fsdp2_end_with_the_same_weights(runs) -> None:
    zero3, fsdp2 = _weights(runs("zero3")[0]), _weights(runs("fsdp2")[0])
    assert _largest_difference(zero3, fsdp2) <= TOLERANCE
    assert _largest_difference(zero3, _starting_weights()) > 100 * TOLERANCE  # the updates show in the weights


@pytest.mark.slow
@pytest.mark.timeout(3 * LAUNCH_TIMEOUT)
@pytest.mark.parametrize("engine", ["zero2", "zero3", "fsdp2", "fsdp2_torchrun"])
def test_each_engine_ends_where_the_plain_ddp_run_ends(engine: str, runs) -> None:
    ddp = runs("ddp")
    assert ddp[0]["optimizer_steps"] == ddp[0]["planned"][0] and not ddp[0]["sharded"]
    assert _largest_difference(_weights(runs(engine)[0]), _weights(ddp[0])) <= TOLERANCE

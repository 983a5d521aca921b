"""Two training processes on the CPU (torchrun, gloo): one global batch for credit, processes in
lockstep. One torchrun launch (``multiprocess_worker.py``) serves every test here; a launch that
does not finish within its timeout (a hang) fails them all."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agentgym_suite.trainers.credit import available_credit_assigners, get_credit_assigner
from agentgym_suite.trainers.distributed import merge_credit_batches
from trainers.credit.conftest import build_batch
from trainers.credit.test_credit_contract import multi_turn_rows

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LAUNCH_TIMEOUT = 420


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def torchrun(script: Path, out: Path, *args: str, processes: int = 2, timeout: float = LAUNCH_TIMEOUT) -> list[dict]:
    """Run ``script out *args`` in ``processes`` processes; the per-rank JSON results. A run that
    outlives ``timeout`` (processes waiting on each other) fails the test."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={processes}", "--master_addr=127.0.0.1",
           f"--master_port={free_port()}", str(script), str(out), *args]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stderr or b"")[-3000:]
        pytest.fail(f"{processes} processes did not finish within {timeout} s (a process waits on the others):\n{tail!r}")
    if proc.returncode != 0:
        pytest.fail(f"torchrun exited with {proc.returncode}:\n{proc.stderr[-6000:]}")
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(processes)]


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("two-processes")
    return torchrun(HERE / "multiprocess_worker.py", out, "--parts", "credit,train,vllm_server,vllm_colocate,updates")


@pytest.mark.parametrize("name", available_credit_assigners())
def test_advantages_equal_one_process_on_the_same_rows(two_processes, name):
    # the fixed batch of the contract test, split between two processes mid-group (rank 1 one token narrower):
    # the advantages each process gets are those of one process holding every row
    plugin = get_credit_assigner(name)
    full = build_batch(multi_turn_rows(plugin), seed=3)
    expected = plugin.advantages(full).advantages
    for part in two_processes:
        got = torch.tensor(part["credit"][name]["advantages"])
        rows = part["credit"][name]["rows"]
        torch.testing.assert_close(got, expected[rows, : got.shape[1]], atol=1e-6, rtol=0)
        assert part["credit"][name]["total_rows"] == full.num_rows
    # the groups really straddle the processes
    groups = [set(full.group_ids[i] for i in part["credit"][name]["rows"]) for part in two_processes]
    assert groups[0] & groups[1]


@pytest.mark.parametrize("run", ["train", "vllm_server", "vllm_colocate"])
def test_uneven_episodes_finish_in_lockstep(two_processes, run):
    # rank 0 plays 1-turn episodes, rank 1 4-turn ones; both finish both steps (a hang fails the fixture)
    first, second = (part[run] for part in two_processes)
    assert first["steps"] == second["steps"] == 2
    assert first["calls"] == second["calls"], "the processes made different collective calls"
    assert sum(first["calls"].values()) > 0
    assert first["rows_padded"] == second["rows_padded"], "every process trains the same number of rows"
    assert first["error_rate"] == second["error_rate"] and set(first["error_rate"]) == {0.0}
    # metrics describe both processes' episodes: the same numbers everywhere
    assert first["turns_mean"] == second["turns_mean"]


@pytest.mark.parametrize("run", ["train", "vllm_server", "vllm_colocate"])
def test_trainer_credit_is_that_of_one_process(two_processes, run):
    # the credit the trainer applied on each process equals one process's credit on both processes' rows
    plugin = get_credit_assigner("gigpo")
    parts = [dict(p[run]["batch"]) for p in two_processes]
    for part in parts:
        for key in ("returns", "invalid", "completion_mask", "old_logprobs", "teacher_logprobs"):
            if isinstance(part.get(key), list):
                part[key] = torch.tensor(part[key])
        part["extras"] = dict(part["extras"], step_rewards=torch.tensor(part["extras"]["step_rewards"]))
    merged, offsets = merge_credit_batches(parts)
    expected = plugin.advantages(merged).advantages
    groups = [set(p["group_ids"]) for p in parts]
    assert groups[0] & groups[1], "each group of 2 has one rollout on each process"
    for part, offset in zip(two_processes, offsets):
        got = torch.tensor(part[run]["advantages"])
        if got.numel():
            mask = torch.tensor(part[run]["batch"]["completion_mask"]).bool()
            want = expected[offset : offset + got.shape[0], : got.shape[1]]
            torch.testing.assert_close(got, torch.where(mask, want, torch.zeros_like(want)), atol=1e-6, rtol=0)
    assert any(torch.tensor(p[run]["advantages"]).abs().sum() > 0 for p in two_processes)


def test_row_bound_holds_on_every_process(two_processes):
    for part in two_processes:
        assert 0 < part["train"]["max_rows"] <= 2
    assert two_processes[0]["train"]["forward_passes"] == two_processes[1]["train"]["forward_passes"]


def test_rows_per_update_steps_in_lockstep_beyond_the_micro_batches(two_processes):
    # uneven episodes, 2 rows per update, 2 micro-batches: both processes take verl-agent's ceil(rows / 2)
    # optimizer steps per generation batch (more than one per micro-batch) and end with the same weights
    first, second = (part["updates"] for part in two_processes)
    assert first["steps"] == second["steps"] == 2
    assert first["rows"] == second["rows"] and len(first["rows"]) == 2
    expected = sum(math.ceil(rows / 2) for rows in first["rows"])
    assert first["optimizer_steps"] == second["optimizer_steps"] == expected > 2 * 2
    assert first["planned"] == second["planned"]
    assert first["weights_sum"] == second["weights_sum"]


@pytest.fixture(scope="module")
def skipping_processes(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("two-processes-skip")
    return torchrun(HERE / "multiprocess_worker.py", out, "--parts", "skip")


def test_a_process_with_nothing_to_train_stays_in_lockstep(skipping_processes):
    first, second = (part["skip"]["rank0_idle"] for part in skipping_processes)
    assert first["steps"] == second["steps"] == 2
    assert first["calls"] == second["calls"], "the processes made different collective calls"
    assert len(first["trained_rows"]) == len(second["trained_rows"]) > 0, "the same forward passes on both"
    assert sum(first["trained_rows"]) == 0 and sum(second["trained_rows"]) > 0
    assert first["skipped"] == second["skipped"] and all(s > 0 for s in first["skipped"])


def test_dynamic_sampling_rounds_stay_in_lockstep(skipping_processes):
    first, second = (part["skip"]["all_dropped"] for part in skipping_processes)
    assert first["steps"] == second["steps"] == 2
    assert first["calls"] == second["calls"]
    # each step: the given group, then one round of one new group per process (the bound: 4 rollouts), all dropped
    assert first["dropped"] == second["dropped"] == [3.0, 3.0]
    assert sum(first["trained_rows"]) == sum(second["trained_rows"]) == 0

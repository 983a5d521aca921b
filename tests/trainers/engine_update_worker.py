"""One process of a multi-update run under an engine, driven by ``test_engine_updates.py``.

Started as a user starts a run: ``accelerate launch`` with a DeepSpeed config (``--engine zero2``
or ``zero3``; gloo, ``DS_ACCELERATOR=cpu``), ``torchrun`` with FSDP2's ``fully_shard`` on a CPU
device mesh (``--engine fsdp2``: accelerate leaves FSDP off on a CPU-only machine), or one plain
process (``--engine reference``, which sees every row). A tiny MLP takes one generation batch of
``MICRO_BATCHES`` micro-batches as the trainer's accumulation loop does (no gradient sync but at
the last, the loss of each micro-batch divided by its update's micro-batch count), with an update
ending after each micro-batch in ``--ends``: :func:`verl_updates.open_update_end` before its
backward pass, :func:`verl_updates.close_update_end` after, as ``AgentGRPOTrainer`` calls them
(in ``_prepare_inputs`` and after ``training_step``). Rank 0 writes ``<out>/<engine>.json``: the full weights afterwards, the
optimizer steps taken and whether the parameters (or their optimizer state) were sharded.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentgym_suite.trainers import verl_updates  # noqa: E402

MICRO_BATCHES = 6
ROWS_PER_PROCESS = 4
MAX_GRAD_NORM = 1.0


def model_and_data() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(MICRO_BATCHES, 2 * ROWS_PER_PROCESS, 8, generator=generator)
    y = torch.randn(MICRO_BATCHES, 2 * ROWS_PER_PROCESS, 4, generator=generator) * 3
    return model, x, y


def update_sizes(ends: list[int]) -> list[int]:
    """Micro-batches per update for every micro-batch (the last update ends at the last micro-batch)."""
    bounds = [-1, *sorted(e for e in ends if e < MICRO_BATCHES - 1), MICRO_BATCHES - 1]
    return [next(b - a for a, b in zip(bounds, bounds[1:]) if a < k <= b) for k in range(MICRO_BATCHES)]


@contextlib.contextmanager
def fsdp2_no_sync(modules: list):
    """What ``accelerate``'s ``no_sync`` does for FSDP2 (the trainer wraps every micro-batch but the last in it)."""
    for module in modules:
        module.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        for module in modules:
            module.set_requires_gradient_sync(True)


def main(argv: list[str] | None = None) -> None:
    """Run the engine's share of the batch (see the module docstring); ``argv``: the command line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=("zero2", "zero3", "fsdp2", "reference"), required=True)
    parser.add_argument("--ends", default="1,3", help="micro-batches (0-based) that end an update, the last excepted")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if os.environ.get("ENGINE_WORKER_DUMP_AFTER"):  # a hung collective prints every thread's stack, then exits
        faulthandler.dump_traceback_later(float(os.environ["ENGINE_WORKER_DUMP_AFTER"]), exit=True)
    ends = [int(e) for e in args.ends.split(",") if e]
    sizes = update_sizes(ends)
    model, x, y = model_and_data()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    steps = [0]
    accelerator, engine, rank, rows = None, None, 0, slice(None)
    if args.engine in ("zero2", "zero3"):
        from accelerate import Accelerator
        from accelerate.state import PartialState

        PartialState(backend="gloo")
        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        engine = accelerator.deepspeed_engine_wrapped.engine
        rank = accelerator.process_index
    elif args.engine == "fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        torch.distributed.init_process_group("gloo")
        rank = torch.distributed.get_rank()
        mesh = init_device_mesh("cpu", (torch.distributed.get_world_size(),))
        for layer in (model[0], model[2]):
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
        accelerator = SimpleNamespace(deepspeed_engine_wrapped=None)
    if engine is None:
        optimizer.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
    if args.engine != "reference":
        rows = slice(rank * ROWS_PER_PROCESS, (rank + 1) * ROWS_PER_PROCESS)
    owner = SimpleNamespace(model=model, optimizer=optimizer, accelerator=accelerator,
                            args=SimpleNamespace(max_grad_norm=MAX_GRAD_NORM))
    sharded_modules = verl_updates.fsdp2_modules(model)
    for k in range(MICRO_BATCHES):
        last = k == MICRO_BATCHES - 1
        if engine is not None:
            accelerator.gradient_state._set_sync_gradients(last)  # as the trainer's loop sets it
        no_sync = fsdp2_no_sync(sharded_modules) if sharded_modules and not last else contextlib.nullcontext()
        with no_sync:
            end = verl_updates.open_update_end(owner) if k in ends and not last else None
            loss = torch.nn.functional.mse_loss(model(x[k, rows]), y[k, rows]) / sizes[k]
            if engine is not None:
                accelerator.backward(loss, scale_wrt_gas=False)  # as transformers' Trainer calls it
            else:
                loss.backward()
            if end is not None:
                verl_updates.close_update_end(owner, end)
        if last and engine is None:  # the trainer's own step at the end of the window
            verl_updates.step_optimizer(owner, reduce=False)
    weights, sharded = {}, False
    if engine is not None:
        import deepspeed

        steps[0] = int(engine.global_steps)
        params = list(engine.module.named_parameters())
        if args.engine == "zero3":
            sharded = all(p.ds_tensor.numel() < p.ds_numel for _, p in params)
            with deepspeed.zero.GatheredParameters([p for _, p in params]):
                weights = {n: p.detach().clone().tolist() for n, p in params}
        else:
            partition = sum(t.numel() for t in engine.optimizer.single_partition_of_fp32_groups)
            sharded = partition < sum(p.numel() for _, p in params)
            weights = {n: p.detach().clone().tolist() for n, p in params}
    elif args.engine == "fsdp2":
        params = list(model.named_parameters())
        sharded = all(p.to_local().numel() < p.numel() for _, p in params)
        weights = {n: p.full_tensor().detach().tolist() for n, p in params}
    else:
        weights = {n: p.detach().tolist() for n, p in model.named_parameters()}
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.engine}.json").write_text(json.dumps(
            {"engine": args.engine, "steps": steps[0], "sharded": sharded, "weights": weights,
             "processes": int(os.environ.get("WORLD_SIZE", "1"))}))
    if torch.distributed.is_initialized():
        torch.distributed.barrier()


if __name__ == "__main__":
    main()

"""One process of a multi-update run under an engine, driven by ``test_engine_updates.py``.

Started as a user starts a run: ``accelerate launch`` with a DeepSpeed config (``--engine zero2``
or ``zero3``; gloo, ``DS_ACCELERATOR=cpu``), ``torchrun`` with FSDP2's ``fully_shard`` on a CPU
device mesh (``--engine fsdp2``: the script shards the MLP and drives it through the package's
stand-in accelerator, :mod:`agentgym_suite.trainers.fsdp2`, as ``benchmarks/gpu_check.py`` does), or one plain
process (``--engine reference``, which sees both processes' rows). A tiny MLP takes one generation
batch of ``MICRO_BATCHES`` micro-batches of ``ROWS_PER_PROCESS`` rows per process as the trainer's
accumulation loop does (no gradient sync but at the last micro-batch), with updates ending after
the rows in ``--ends`` (counted over a process's rows; often inside a micro-batch): the micro-batches
are planned with :func:`verl_updates.plan_rows` and their losses run through
:class:`verl_updates.UpdateSteps` in passes of at most ``--max-rows-per-pass`` rows, exactly as
``AgentGRPOTrainer`` calls them (``compute_loss``, then ``finish`` after the backward pass). Each
row's loss is a mean over its update's rows (the auxiliary-loss scale :data:`UPDATE_SHARE`). Rank 0
writes ``<out>/<engine>.json``: the full weights afterwards, the optimizer steps taken and whether
the parameters (or their optimizer state) were sharded.
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

from agentgym_suite.trainers import fsdp2, verl_updates  # noqa: E402
from agentgym_suite.trainers.memory_bound import pass_token_share  # noqa: E402

MICRO_BATCHES = 6
ROWS_PER_PROCESS = 4
MAX_GRAD_NORM = 1.0
PROCESSES = 2


def model_and_data() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(MICRO_BATCHES, 2 * ROWS_PER_PROCESS, 8, generator=generator)
    y = torch.randn(MICRO_BATCHES, 2 * ROWS_PER_PROCESS, 4, generator=generator) * 3
    return model, x, y


def micro_batch(k: int) -> dict:
    """Micro-batch ``k`` of one process as the trainer holds it: one trained token per row; ``row``
    is the row's place in the micro-batch (the loss looks the data up by it)."""
    ones = torch.ones(ROWS_PER_PROCESS, 1, dtype=torch.long)
    return {"completion_mask": ones, "prompt_mask": ones, "row": torch.arange(ROWS_PER_PROCESS), "micro": k}


def main(argv: list[str] | None = None) -> None:
    """Run the engine's share of the batch (see the module docstring); ``argv``: the command line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=("zero2", "zero3", "fsdp2", "reference"), required=True)
    parser.add_argument("--ends", default="2,3,4,6,10,13,17,22",
                        help="rows (of a process's rows, exclusive ends) after which an update ends, the last excepted")
    parser.add_argument("--max-rows-per-pass", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if os.environ.get("ENGINE_WORKER_DUMP_AFTER"):  # a hung collective prints every thread's stack, then exits
        faulthandler.dump_traceback_later(float(os.environ["ENGINE_WORKER_DUMP_AFTER"]), exit=True)
    row_ends = [int(e) for e in args.ends.split(",") if e] + [MICRO_BATCHES * ROWS_PER_PROCESS]
    model, x, y = model_and_data()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    steps = [0]
    accelerator, engine, ranks = None, None, list(range(PROCESSES))
    if args.engine in ("zero2", "zero3"):
        from accelerate import Accelerator
        from accelerate.state import PartialState

        PartialState(backend="gloo")
        accelerator = Accelerator()
        model, optimizer = accelerator.prepare(model, optimizer)
        engine = accelerator.deepspeed_engine_wrapped.engine
        ranks = [accelerator.process_index]
    elif args.engine == "fsdp2":
        torch.distributed.init_process_group("gloo")
        ranks = [torch.distributed.get_rank()]
        fsdp2.shard_model(model, (model[0], model[2]))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    sharded_modules = verl_updates.fsdp2_modules(model)
    if engine is None:
        accelerator = fsdp2.Fsdp2Accelerator(sharded_modules)
        optimizer.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
    owner = SimpleNamespace(model=model, optimizer=optimizer, accelerator=accelerator,
                            args=SimpleNamespace(max_grad_norm=MAX_GRAD_NORM))
    chunks = [micro_batch(k) for k in range(MICRO_BATCHES)]
    verl_updates.plan_rows(chunks, row_ends, [1.0] * len(row_ends), sync=None)
    updates = verl_updates.UpdateSteps(owner)

    def loss_of(part: dict) -> torch.Tensor:
        # each process's rows of the pass (the reference: both processes', averaged as DDP averages them)
        losses = [torch.nn.functional.mse_loss(model(x[part["micro"], r * ROWS_PER_PROCESS + part["row"]]),
                                               y[part["micro"], r * ROWS_PER_PROCESS + part["row"]]) for r in ranks]
        share = pass_token_share(part) * float(part[verl_updates.UPDATE_SHARE]) / MICRO_BATCHES
        return torch.stack(losses).mean() * share

    for k in range(MICRO_BATCHES):
        last = k == MICRO_BATCHES - 1
        accelerator.gradient_state._set_sync_gradients(last)  # as the trainer's loop sets it
        no_sync = accelerator.no_sync(model) if engine is None and not last else contextlib.nullcontext()
        with no_sync:
            loss = updates.loss(chunks[k], args.max_rows_per_pass, loss_of, model)
            if engine is not None:
                accelerator.backward(loss, scale_wrt_gas=False)  # as transformers' Trainer calls it
            else:
                loss.backward()
            updates.finish()
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
        sharded = fsdp2.parameters_sharded(model)
        weights = {n: p.full_tensor().detach().tolist() for n, p in params}
    else:
        weights = {n: p.detach().tolist() for n, p in model.named_parameters()}
    if ranks[0] == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.engine}.json").write_text(json.dumps(
            {"engine": args.engine, "steps": steps[0], "sharded": sharded, "weights": weights,
             "processes": int(os.environ.get("WORLD_SIZE", "1"))}))
    if torch.distributed.is_initialized():
        torch.distributed.barrier()


if __name__ == "__main__":
    main()

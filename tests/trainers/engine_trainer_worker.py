"""One process of an ``AgentGRPOTrainer`` run under an engine, driven by ``test_engine_trainer.py``.

Started as a user starts a run: ``accelerate launch`` with a DeepSpeed config (``--engine zero2`` or
``zero3``; ``ddp_backend: gloo``, ``DS_ACCELERATOR=cpu``), or ``accelerate launch`` with an FSDP2
config (``--engine fsdp2``: on a CPU-only machine the trainer turns accelerate's FSDP2 on, see
:mod:`agentgym_suite.trainers.fsdp2`), ``torchrun`` with the ``fsdp`` training arguments
(``--engine fsdp2_torchrun``), or ``torchrun`` without an engine (``--engine ddp``). The
trainer plays one generation batch of the letter env (the tests' tiny random model and its locally
trained tokenizer) with ``rows_per_update`` small enough for several optimizer updates, and each
rank writes ``<out>/<engine>-rank<r>.json``: the optimizer steps taken, the verl plan's update
count, the rows planned, whether the parameters were sharded, the logged losses, a checksum of
the full weights afterwards, and how far the model ``save_model`` wrote (as ``agentgym train`` ends)
is from them.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1]))

import torch  # noqa: E402

torch.set_num_threads(1)


def full_weights(trainer) -> dict[str, torch.Tensor]:
    """Every parameter of the trained model, whole, on the CPU (gathered under ZeRO-3 and FSDP2)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    params = list(model.named_parameters())
    if any(hasattr(p, "ds_tensor") for _, p in params):
        import deepspeed

        with deepspeed.zero.GatheredParameters([p for _, p in params]):
            return {n: p.detach().clone().cpu() for n, p in params}
    return {n: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().clone().cpu() for n, p in params}


def sharded(trainer) -> bool:
    """Whether every process holds only part of the parameters (ZeRO-3, FSDP2) or of the optimizer
    state (ZeRO-2)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    params = [p for p in model.parameters()]
    if all(hasattr(p, "ds_tensor") for p in params):
        return all(p.ds_tensor.numel() < p.ds_numel for p in params)
    if all(hasattr(p, "to_local") for p in params):
        return all(p.to_local().numel() < p.numel() for p in params)
    wrapped = getattr(trainer.accelerator, "deepspeed_engine_wrapped", None)
    if wrapped is not None and hasattr(wrapped.engine.optimizer, "single_partition_of_fp32_groups"):
        partition = sum(t.numel() for t in wrapped.engine.optimizer.single_partition_of_fp32_groups)
        return partition < sum(p.numel() for p in params)
    return False


def main(argv: list[str] | None = None) -> None:
    """Train one generation batch and write this rank's results (see the module docstring)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=("zero2", "zero3", "fsdp2", "fsdp2_torchrun", "ddp"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rows-per-update", type=int, default=2)
    cli = parser.parse_args(argv)
    if os.environ.get("ENGINE_WORKER_DUMP_AFTER"):  # a hung collective prints every thread's stack, then exits
        faulthandler.dump_traceback_later(float(os.environ["ENGINE_WORKER_DUMP_AFTER"]), exit=True)
    from agentgym_suite.trainers import AgentGRPOTrainer, verl_updates
    from trainers.conftest import tiny_config
    from trainers.fake_env import LetterEnv

    fsdp = dict(fsdp=True, fsdp_config={"version": 2, "transformer_layer_cls_to_wrap": ["Qwen2DecoderLayer"]}) \
        if cli.engine == "fsdp2_torchrun" else {}
    # one generation batch of 2 tasks x G=2 per process, episodes of 2 turns: 8 rows per process
    args = tiny_config(str(cli.out / f"run-{cli.engine}"), per_device_train_batch_size=2, num_generations=2,
                       steps_per_generation=2, max_steps=1, max_turns=2, rows_per_update=cli.rows_per_update,
                       max_rows_per_pass=3, save_trajectories=False, ddp_backend="gloo", **fsdp)
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: LetterEnv(horizon=2))
    planned: list[int] = []
    rows_planned: list[int] = []
    plan = verl_updates.plan_updates

    def recorded_plan(chunks, rows, *a, **kw):
        updates = plan(chunks, rows, *a, **kw)
        planned.append(updates)
        rows_planned.append(rows)
        return updates

    verl_updates.plan_updates = recorded_plan
    steps = [0]
    create = trainer.create_optimizer

    def counted():
        optimizer = create()
        optimizer.register_step_post_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
        return optimizer

    trainer.create_optimizer = counted
    trainer.train()
    wrapped = getattr(trainer.accelerator, "deepspeed_engine_wrapped", None)
    if wrapped is not None:  # the engine steps its own optimizer (the hook sees DeepSpeed's)
        steps[0] = int(wrapped.engine.global_steps)
    weights = full_weights(trainer)
    saved = cli.out / f"model-{cli.engine}"
    trainer.save_model(str(saved))  # as `agentgym train` ends: a collective under ZeRO-3 and FSDP2
    history = trainer.state.log_history
    losses = [h["loss"] for h in history if "loss" in h]
    rank = trainer.accelerator.process_index
    saved_difference, saved_missing = None, None
    if rank == 0 and (saved / "model.safetensors").exists():
        from safetensors.torch import load_file

        tensors = load_file(saved / "model.safetensors")
        saved_missing = sorted(set(weights) - set(tensors))
        saved_difference = max(float((tensors[n].float() - w).abs().max()) for n, w in weights.items() if n in tensors)
    result = {"engine": cli.engine, "rank": rank, "processes": trainer.accelerator.num_processes,
              "distributed_type": str(trainer.accelerator.distributed_type),
              "generation_batches": trainer.state.global_step, "optimizer_steps": steps[0],
              "planned": planned, "rows": rows_planned,
              "micro_batches": args.steps_per_generation, "rows_per_update": args.rows_per_update,
              "sharded": sharded(trainer), "losses": losses,
              "saved_difference": saved_difference, "saved_missing": saved_missing,
              "finite": all(math.isfinite(v) for v in losses) and all(bool(torch.isfinite(w).all())
                                                                     for w in weights.values()),
              "weights_sum": float(sum(w.double().sum() for w in weights.values())),
              "weights": {n: w.tolist() for n, w in weights.items()} if rank == 0 else {}}
    cli.out.mkdir(parents=True, exist_ok=True)
    (cli.out / f"{cli.engine}-rank{rank}.json").write_text(json.dumps(result))
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
    os._exit(0)  # skip the slow (and, under FSDP2, occasionally aborting) teardown of a training process


if __name__ == "__main__":
    main()

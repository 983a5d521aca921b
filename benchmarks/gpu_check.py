"""One GPU check that fits a lent GPU's time: the verl update schedule under ZeRO-3 and FSDP2 on a
Qwen2.5-7B-shaped model, generation speed, and our trainer step beside TRL's, in one JSON.

Parts, each in its own process so one's memory does not weigh on the next:

* ``engine_zero3`` / ``engine_fsdp2``: one generation batch of ``--micro-batches`` micro-batches
  (``--rows`` rows of ``--seq`` tokens each) with ``--updates`` optimizer updates (more than
  micro-batches by default: updates end inside micro-batches), planned and taken by
  :mod:`agentgym_suite.trainers.verl_updates` as the trainer takes them; DeepSpeed ZeRO-3
  started by ``accelerate launch``, FSDP2 (``fully_shard`` through
  :mod:`agentgym_suite.trainers.fsdp2`'s ``shard_model`` and stand-in accelerator) by ``torchrun``. Randomly initialised
  Qwen2.5-7B widths (hidden 3584, 28 heads, 4 KV heads, MLP 18944, vocabulary 152064) with
  ``--layers`` of its 28 layers (8 by default, so the fp32 optimizer state of one GPU fits);
  step time, tokens/s, peak memory, optimizer steps taken;
* ``generation``: ``generate`` on the same shape, new tokens per second;
* ``trainer_vs_trl``: ``benchmarks/gpu_step.py`` (AgentGRPOTrainer against TRL's GRPOTrainer on
  the same batch in the same run, Qwen2.5-1.5B's architecture).

``--dry-run`` runs every part with tiny shapes on the CPU (gloo, ``DS_ACCELERATOR=cpu``): a test
of the script (tests/benchmarks/test_gpu_check.py), not a measurement. Usage: ``benchmarks/gpu_check.sh``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QWEN25_7B = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_attention_heads=28,
                 num_key_value_heads=4, max_position_embeddings=32768, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
                 tie_word_embeddings=False, hidden_act="silu")
"""Qwen2.5-7B's architecture (its published config.json), all but the layer count."""
TINY = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
            tie_word_embeddings=False)


def build_model(dry_run: bool, layers: int):
    """A randomly initialised Qwen2 causal LM of Qwen2.5-7B's widths (or tiny)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    shape = TINY if dry_run else QWEN25_7B
    return Qwen2ForCausalLM(Qwen2Config(**shape, num_hidden_layers=2 if dry_run else layers))


def peak_memory_gib(device: str) -> float:
    """Peak memory of this process: CUDA allocator peak on a GPU, peak RSS on the CPU."""
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def engine_part(cli: argparse.Namespace) -> dict:
    """The child of ``engine_*``: one generation batch with ``--updates`` updates under the engine."""
    import torch

    from agentgym_suite.trainers import fsdp2, verl_updates
    from agentgym_suite.trainers.memory_bound import pass_token_share

    device = "cpu" if cli.dry_run else "cuda"
    accelerator: Any = None
    model = build_model(cli.dry_run, cli.layers)
    if not cli.dry_run:
        model.gradient_checkpointing_enable()
    optimizer_steps = [0]
    engine = None
    if cli.part == "engine_zero3":
        from accelerate import Accelerator
        from accelerate.state import PartialState

        PartialState(backend="gloo" if cli.dry_run else "nccl")
        accelerator = Accelerator()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
        model, optimizer = accelerator.prepare(model, optimizer)
        engine = accelerator.deepspeed_engine_wrapped.engine
    else:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import MixedPrecisionPolicy

        torch.distributed.init_process_group("gloo" if cli.dry_run else "nccl")
        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
            model = model.to(device)
        mesh = init_device_mesh(device, (torch.distributed.get_world_size(),))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16 if device == "cuda" else torch.float32)
        fsdp2.shard_model(model, model.model.layers, mesh, mp_policy=policy)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
        optimizer.register_step_post_hook(lambda *_: optimizer_steps.__setitem__(0, optimizer_steps[0] + 1))
    sharded = verl_updates.fsdp2_modules(model)
    if engine is None:
        accelerator = fsdp2.Fsdp2Accelerator(sharded)
    owner = SimpleNamespace(model=model, optimizer=optimizer, accelerator=accelerator,
                            args=SimpleNamespace(max_grad_norm=1.0))
    micro = cli.micro_batches
    vocab = (TINY if cli.dry_run else QWEN25_7B)["vocab_size"]
    generator = torch.Generator().manual_seed(0)
    rows = cli.rows // micro
    chunks = [{"input_ids": torch.randint(0, vocab, (rows, cli.seq), generator=generator),
               "completion_mask": torch.ones(rows, 1), "prompt_mask": torch.ones(rows, 1)} for _ in range(micro)]
    # the trainer's planner and passes: update ends on rows, inside micro-batches where they fall there
    row_ends = [round(rows * micro * (j + 1) / cli.updates) for j in range(cli.updates)]
    verl_updates.plan_rows(chunks, row_ends, [1.0] * cli.updates, sync=None)
    updates = verl_updates.UpdateSteps(owner)

    def loss_of(part: dict):
        ids = part["input_ids"].to(model.device if engine is None else engine.device)
        share = pass_token_share(part) * float(part[verl_updates.UPDATE_SHARE]) / micro  # a mean over the update
        return model(input_ids=ids, labels=ids).loss * share

    def one_batch() -> None:
        for k, chunk in enumerate(chunks):
            last = k == micro - 1
            accelerator.gradient_state._set_sync_gradients(last)  # as the trainer's loop sets it
            context = accelerator.no_sync(model) if engine is None and not last else contextlib.nullcontext()
            with context:
                loss = updates.loss(chunk, None, loss_of, model)
                if engine is not None:
                    accelerator.backward(loss, scale_wrt_gas=False)
                else:
                    loss.backward()
                updates.finish()
        if engine is None:
            verl_updates.step_optimizer(owner, reduce=False)

    one_batch()  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    one_batch()
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    steps = int(engine.global_steps) if engine is not None else optimizer_steps[0]
    return {"step_s": seconds, "tokens_per_s": cli.rows * cli.seq / seconds, "peak_gib": peak_memory_gib(device),
            "optimizer_steps_per_batch": steps / 2, "updates": cli.updates, "rows": cli.rows, "seq": cli.seq,
            "layers": 2 if cli.dry_run else cli.layers,
            "parameters": sum(getattr(p, "ds_numel", p.numel()) for p in (engine.module if engine else model).parameters())}


def generation_part(cli: argparse.Namespace) -> dict:
    """The child of ``generation``: new tokens per second of ``generate`` on the same shape (bf16 on a GPU)."""
    import torch

    device = "cpu" if cli.dry_run else "cuda"
    model = build_model(cli.dry_run, cli.layers).to(device, torch.float32 if cli.dry_run else torch.bfloat16)
    model.generation_config.pad_token_id = 0
    prompts = torch.randint(0, model.config.vocab_size, (cli.rows // cli.micro_batches, cli.seq // 2), device=device)
    new = 8 if cli.dry_run else 256
    model.generate(prompts[:, :8], max_new_tokens=4, do_sample=True, min_new_tokens=4)  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    out = model.generate(prompts, max_new_tokens=new, min_new_tokens=new, do_sample=True)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    tokens = (out.shape[1] - prompts.shape[1]) * out.shape[0]
    return {"new_tokens": int(tokens), "seconds": seconds, "tokens_per_s": tokens / seconds,
            "peak_gib": peak_memory_gib(device)}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_part(part: str, cli: argparse.Namespace, folder: Path) -> dict:
    """Start one part in its own process (as a user starts that engine) and read its JSON."""
    out = folder / f"{part}.json"
    own = [str(HERE / "gpu_check.py"), "--part", part, "--part-out", str(out), "--layers", str(cli.layers),
           "--rows", str(cli.rows), "--seq", str(cli.seq), "--updates", str(cli.updates),
           "--micro-batches", str(cli.micro_batches), *(["--dry-run"] if cli.dry_run else [])]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    if cli.dry_run:
        env.update(DS_ACCELERATOR="cpu", OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    if part == "engine_zero3":
        ds = {"train_micro_batch_size_per_gpu": max(1, cli.rows // cli.micro_batches),
              "gradient_accumulation_steps": cli.micro_batches, "gradient_clipping": 1.0,
              "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0 if cli.dry_run else 100000},
              "zero_force_ds_cpu_optimizer": False, "bf16": {"enabled": not cli.dry_run}}
        (folder / "ds_zero3.json").write_text(json.dumps(ds))
        (folder / "zero3.yaml").write_text("\n".join([
            "compute_environment: LOCAL_MACHINE", "distributed_type: DEEPSPEED", "deepspeed_config:",
            f"  deepspeed_config_file: {folder / 'ds_zero3.json'}", "  zero3_init_flag: false", "machine_rank: 0",
            "main_training_function: main", "num_machines: 1", "num_processes: 1", "rdzv_backend: static",
            "same_network: true", f"use_cpu: {'true' if cli.dry_run else 'false'}", ""]))
        command = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(folder / "zero3.yaml"),
                   "--main_process_port", str(_port()), *own]
    elif part == "engine_fsdp2":
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "1", "--master_port",
                   str(_port()), *own]
    elif part == "generation":
        command = [sys.executable, *own]
    else:  # trainer_vs_trl
        command = [sys.executable, str(HERE / "gpu_step.py"), "--json", str(out), *(["--tiny"] if cli.dry_run else [])]
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    if not out.exists():  # the part's results decide (a process may abort at exit after writing them)
        return {"error": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-3000:]}
    return {**json.loads(out.read_text()), "wall_s": time.perf_counter() - started}


PARTS = ("engine_zero3", "engine_fsdp2", "generation", "trainer_vs_trl")


def main(argv: list[str] | None = None) -> int:
    """Run every part (or, with ``--part``, one part's child) and write the JSON; 1 if a part failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU: a check of the script")
    parser.add_argument("--json", type=Path, help="where the results go (default: benchmarks/gpu_check.json)")
    parser.add_argument("--layers", type=int, default=8, help="Qwen2.5-7B layers to build (of 28)")
    parser.add_argument("--rows", type=int, default=64, help="rows of the generation batch")
    parser.add_argument("--seq", type=int, default=1024, help="tokens per row")
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--updates", type=int, default=12,
                        help="optimizer updates per generation batch (more than micro-batches, as ALFWorld on 8 GPUs)")
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--part", choices=PARTS, help=argparse.SUPPRESS)
    parser.add_argument("--part-out", type=Path, help=argparse.SUPPRESS)
    cli = parser.parse_args(argv)
    if cli.dry_run:
        cli.rows, cli.seq, cli.micro_batches, cli.updates = 8, 16, 4, min(cli.updates, 6)
    if not 1 <= cli.updates <= cli.rows:
        raise SystemExit(f"--updates {cli.updates}: needs 1 to --rows ({cli.rows}) updates (an update has at least one row)")
    if cli.part:  # a child
        result = (engine_part if cli.part.startswith("engine") else generation_part)(cli)
        if int(os.environ.get("RANK", "0")) == 0:
            cli.part_out.write_text(json.dumps(result))
        return 0
    import torch

    if not cli.dry_run and not torch.cuda.is_available():
        raise SystemExit("no GPU visible; run with --dry-run to check the script on the CPU")
    results: dict = {"device": "CPU (dry run, tiny shapes)" if cli.dry_run else torch.cuda.get_device_name(0),
                     "settings": {k: getattr(cli, k) for k in ("layers", "rows", "seq", "micro_batches", "updates")}}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for part in cli.parts.split(","):
            results[part] = run_part(part, cli, Path(folder))
            print(f"{part}: {json.dumps(results[part])[:300]}", flush=True)
    results["wall_s"] = time.perf_counter() - started
    target = cli.json or HERE / "gpu_check.json"
    target.write_text(json.dumps(results, indent=1))
    print(f"wrote {target}")
    return 1 if any("error" in results[p] for p in cli.parts.split(",")) else 0


if __name__ == "__main__":
    sys.exit(main())

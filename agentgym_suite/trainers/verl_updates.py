"""verl-agent's update schedule and loss terms, on top of TRL's GRPO step.

verl cuts each training step's rows into mini-batches of ``ppo_mini_batch_size *
actor_rollout_ref.rollout.n`` rows and takes one optimizer step per mini-batch. verl-agent asserts
``actor_rollout_ref.rollout.n == 1`` (its group size is ``env.rollout.n``, read only by the rollout
loop), so a mini-batch counts step rows: 256 for ALFWorld, 64 for WebShop, 512 for GiGPO's search
recipe. Before the split, ``adjust_batch`` pads the step's rows with duplicated rows to a multiple
of (per-GPU micro-batch size, lcm over actor / log-prob / reference passes) x GPUs; every epoch
(``ppo_epochs``) then walks the mini-batches in order, ``ceil(padded rows / mini-batch)`` optimizer
steps however many GPUs share them, and a short last mini-batch is still divided by the full
accumulation count (its loss weighs ``its rows / mini-batch rows``). :func:`verl_schedule` computes
that schedule (tests/conformance/verl_schedule holds verl's own numbers for it).

``rows_per_update`` runs it here: TRL cuts the generation batch into ``steps_per_generation``
micro-batches and (with ``gradient_accumulation_steps`` set equal) steps the optimizer once after
the last; :func:`plan_updates` groups the micro-batches into verl's updates in row order, each
loss a token mean over its own rows times verl's weight, and :func:`open_update_end` /
:func:`close_update_end` take the earlier updates' optimizer steps in between: under one process
or DDP by :func:`step_optimizer` (gradients all-reduced first), under DeepSpeed ZeRO-2/3 by making
the micro-batch a gradient-accumulation boundary (the engine steps), under FSDP2 by turning the
gradient reduce-scatter on for that backward pass (tests/trainers/test_engine_updates.py runs all
four on two CPU processes against one process). The old
log-probs are those of the rollout policy, so PPO clipping acts from the second update on. The
learning-rate scheduler still steps once per generation batch, as verl's does once per training step.

Departures, printed at the start of a run (:func:`schedule_departures`): an update boundary falls
between micro-batches, so a generation batch with more verl updates than micro-batches takes one
update per micro-batch; padding rows are all-masked rows, not duplicates (the duplicates are
counted in the schedule and in the last update's weight, but their tokens are not trained twice).

:func:`low_var_kl` is verl's ``low_var_kl`` estimator: TRL's k3 term clamped to [-10, 10].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

UPDATE_SCALE = "update_loss_scale"
"""0-dim tensor on each micro-batch: generation-batch tokens / tokens of the update it belongs to
(turns TRL's generation-wide token mean into the update's own)."""
UPDATE_SHARE = "update_micro_batch_scale"
"""0-dim tensor: micro-batches per generation batch / micro-batches of this update (for losses that
TRL divides by the accumulation steps: the plug-ins' auxiliary losses)."""


def low_var_kl(logps: Tensor, ref_logps: Tensor) -> Tensor:
    """Per-token ``exp(d) - d - 1`` with ``d = ref - logp``, clamped to [-10, 10] (verl's ``low_var_kl``)."""
    d = ref_logps - logps
    return torch.clamp(torch.exp(d) - d - 1.0, min=-10.0, max=10.0)


@dataclass(frozen=True)
class VerlSchedule:
    """One training step's optimizer updates as verl-agent takes them."""

    padded_rows: int
    """Rows after ``adjust_batch`` (real rows plus duplicates)."""
    duplicated_rows: int
    """Rows ``adjust_batch`` added as copies of real rows."""
    update_rows: tuple[int, ...]
    """Rows of each optimizer update over all GPUs, in order, every epoch's updates in turn."""
    loss_weights: tuple[float, ...]
    """Each update's loss weight: its rows / a full mini-batch's (below 1 for a short last one)."""

    @property
    def updates(self) -> int:
        """Optimizer steps per training step."""
        return len(self.update_rows)


def verl_schedule(rows: int, rows_per_update: int, processes: int, pad_rows_per_process: int | None = None,
                  epochs: int = 1) -> VerlSchedule:
    """verl-agent's schedule for a step of ``rows`` rows on ``processes`` GPUs: ``adjust_batch`` pads
    to a multiple of ``pad_rows_per_process * processes`` with duplicates (None: to a multiple of
    ``processes``, as the dispatch needs), each GPU takes ``padded / processes`` consecutive rows and
    cuts them into mini-batches of ``rows_per_update // processes`` rows (verl's normalisation), and
    each of ``epochs`` epochs steps the optimizer once per mini-batch."""
    if rows_per_update < processes:
        raise ValueError(f"rows_per_update={rows_per_update} is less than one row per process ({processes} "
                         "processes); verl requires ppo_mini_batch_size >= GPUs. Raise it or run on fewer processes.")
    divisor = (pad_rows_per_process or 1) * processes
    real = max(rows, 1)
    padded = math.ceil(real / divisor) * divisor
    per_process = padded // processes
    mini = rows_per_update // processes
    sizes = [min(mini, per_process - start) for start in range(0, per_process, mini)]
    return VerlSchedule(padded_rows=padded, duplicated_rows=padded - real,
                        update_rows=tuple(size * processes for size in sizes) * epochs,
                        loss_weights=tuple(size / mini for size in sizes) * epochs)


def update_ends(schedule: VerlSchedule, micro_batches: int) -> list[int]:
    """The micro-batch (0-based, exclusive end) each update of one epoch of ``schedule`` ends at:
    update boundaries at the micro-batch nearest to verl's row boundary, every update at least one
    micro-batch; with more updates than micro-batches, one update per micro-batch (the cap)."""
    per_epoch = _epoch_updates(schedule)
    if per_epoch >= micro_batches:
        return list(range(1, micro_batches + 1))
    ends: list[int] = []
    done, previous = 0, 0
    for j, size in enumerate(schedule.update_rows[:per_epoch]):
        done += size
        end = round(micro_batches * done / schedule.padded_rows)
        end = min(max(end, previous + 1), micro_batches - (per_epoch - 1 - j))
        ends.append(end)
        previous = end
    return ends


def _epoch_updates(schedule: VerlSchedule) -> int:
    """Updates of one epoch (the schedule repeats them ``epochs`` times)."""
    total, count = 0, 0
    for size in schedule.update_rows:
        total += size
        count += 1
        if total >= schedule.padded_rows:
            return count
    return count


def updates_for(rows: int, rows_per_update: int, processes: int = 1, pad_rows_per_process: int | None = None) -> int:
    """verl-agent's optimizer updates for a step of ``rows`` rows (one epoch): ``ceil(padded / mini-batch)``."""
    return _epoch_updates(verl_schedule(rows, rows_per_update, processes, pad_rows_per_process))


def plan_updates(chunks: list[dict[str, Any]], rows: int, rows_per_update: int, sync: Any,
                 pad_rows_per_process: int | None = None) -> set[int]:
    """Tag every micro-batch of a generation batch with its update's loss scales and return the
    indices of the micro-batches that end an update (the last one included).

    ``rows``: real rows of the generation batch over all processes; ``sync``: the processes'
    collectives (token counts are summed over processes so every process plans the same updates).
    Each update's loss is a token mean over its own rows times verl's weight of it
    (:attr:`VerlSchedule.loss_weights`; 1 for every update when the cap applies).
    """
    count = len(chunks)
    processes = int(getattr(sync, "world_size", 1) or 1)
    schedule = verl_schedule(rows, max(rows_per_update, processes), processes, pad_rows_per_process)
    ends = update_ends(schedule, count)
    capped = _epoch_updates(schedule) > count
    local = [float(_trained_tokens(c)) for c in chunks]
    tokens = torch.tensor(local, dtype=torch.float64)
    if getattr(sync, "distributed", False):
        tokens = torch.tensor(sync.gather(local), dtype=torch.float64).sum(dim=0)
    total = float(tokens.sum())
    start = 0
    for j, end in enumerate(ends):
        ks = list(range(start, end))
        weight = 1.0 if capped else schedule.loss_weights[j]
        update_tokens = float(tokens[ks].sum())
        for k in ks:
            device = chunks[k]["completion_mask"].device
            scale = total / update_tokens * weight if update_tokens > 0 else 0.0
            chunks[k][UPDATE_SCALE] = torch.tensor(scale, device=device)
            chunks[k][UPDATE_SHARE] = torch.tensor(count / len(ks) * weight, device=device)
        start = end
    return {end - 1 for end in ends}


def schedule_departures(rows_per_update: int, micro_batches: int, pad_rows_per_process: int | None) -> list[str]:
    """What this trainer's update schedule does differently from verl-agent's, as lines for the run's start."""
    lines = [
        f"updates per generation batch are at most steps_per_generation={micro_batches} (update boundaries fall "
        f"between micro-batches); verl-agent takes ceil(rows / {rows_per_update}) whatever their number, so a "
        f"generation batch of more than {micro_batches * rows_per_update} rows gets fewer, larger updates here",
        "an update's loss is a token mean over all its rows (verl: a mean of per-micro-batch token means)",
    ]
    if pad_rows_per_process:
        lines.append(f"adjust_batch's duplicated rows (to a multiple of {pad_rows_per_process} x processes) are "
                     "counted in the schedule and the last update's weight, but padded here with all-masked rows")
    return lines


def _trained_tokens(chunk: dict[str, Any]) -> Tensor:
    mask = chunk["completion_mask"]
    if "tool_mask" in chunk:
        mask = mask * chunk["tool_mask"]
    return mask.sum()


class UpdateOwner(Protocol):
    """What :func:`step_optimizer` needs of a trainer (public ``transformers.Trainer`` attributes)."""

    model: Any
    optimizer: Any
    accelerator: Any
    args: Any


@dataclass
class UpdateEnd:
    """What :func:`open_update_end` changed for the backward pass of a micro-batch that ends an update."""

    engine: str
    """``deepspeed``, ``fsdp2`` or ``ddp`` (one process or DDP)."""
    restore: Any = None
    """DeepSpeed: (previous ``sync_gradients``, the engine's LR scheduler); FSDP2: the sharded modules."""


def deepspeed_engine(owner: UpdateOwner) -> Any:
    """The DeepSpeed engine accelerate runs the model in, or None."""
    wrapped = getattr(owner.accelerator, "deepspeed_engine_wrapped", None)
    return None if wrapped is None else wrapped.engine


def fsdp2_modules(model: Any) -> list[Any]:
    """The modules of ``model`` that ``fully_shard`` (FSDP2) sharded, outermost first."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # pragma: no cover - torch without FSDP2
        return []
    return [m for m in model.modules() if isinstance(m, FSDPModule)]


def open_update_end(owner: UpdateOwner) -> UpdateEnd:
    """Call before the backward pass of a micro-batch that ends an update inside the accumulation
    window. DeepSpeed (ZeRO-2/3): the micro-batch is made a gradient-accumulation boundary (accelerate
    then reduces the gradients and calls ``engine.step()``: clipping to ``gradient_clipping``, the
    optimizer step, zeroed gradients), with the engine's LR scheduler held back so it still steps once
    per generation batch. FSDP2: gradient reduce-scatter is switched on for this backward pass."""
    engine = deepspeed_engine(owner)
    if engine is not None:
        state = owner.accelerator.gradient_state
        previous = state.sync_gradients
        state._set_sync_gradients(True)
        scheduler, engine.lr_scheduler = engine.lr_scheduler, None
        return UpdateEnd("deepspeed", (previous, scheduler))
    sharded = fsdp2_modules(owner.model)
    if sharded:
        for module in sharded:
            module.set_requires_gradient_sync(True)
        return UpdateEnd("fsdp2", sharded)
    return UpdateEnd("ddp")


def close_update_end(owner: UpdateOwner, end: UpdateEnd) -> float | None:
    """Call after that backward pass: take the update's optimizer step (DeepSpeed took it inside the
    backward) and restore what :func:`open_update_end` changed. Returns the gradient norm before
    clipping where this function clipped (None under DeepSpeed or without ``max_grad_norm``)."""
    if end.engine == "deepspeed":
        previous, scheduler = end.restore
        deepspeed_engine(owner).lr_scheduler = scheduler
        owner.accelerator.gradient_state._set_sync_gradients(previous)
        return None
    norm = step_optimizer(owner, reduce=end.engine == "ddp")
    if end.engine == "fsdp2":
        for module in end.restore:
            module.set_requires_gradient_sync(False)  # the trainer's no_sync window goes on
    return norm


def step_optimizer(owner: UpdateOwner, reduce: bool = True) -> float | None:
    """One optimizer update in the middle of TRL's accumulation window: gradients averaged over
    processes (``reduce``: they were accumulated without syncing under DDP; FSDP2 reduced them
    already), clipped to ``max_grad_norm``, stepped, zeroed. The accelerate wrapper skips steps
    outside a sync step, so the wrapped optimizer is stepped. Returns the gradient norm before
    clipping (None without ``max_grad_norm``)."""
    params = [p for p in owner.model.parameters() if p.requires_grad]
    processes = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    if reduce and processes > 1:
        for p in params:
            if p.grad is not None:
                torch.distributed.all_reduce(p.grad)
                p.grad.div_(processes)
    norm = None
    if owner.args.max_grad_norm and owner.args.max_grad_norm > 0:
        total = torch.nn.utils.clip_grad_norm_(params, owner.args.max_grad_norm)
        norm = float(total.full_tensor() if hasattr(total, "full_tensor") else total)
    optimizer = getattr(owner.optimizer, "optimizer", owner.optimizer)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return norm


def check_update_setup(*, fp16_scaler: bool) -> None:
    """Refuse ``rows_per_update`` with fp16 loss scaling (a skipped step would desynchronise the
    updates); one process, DDP, DeepSpeed ZeRO-2/3 and FSDP2 all take its optimizer steps."""
    if fp16_scaler:
        raise ValueError("rows_per_update does not support fp16 loss scaling; use bf16 (or fp32).")

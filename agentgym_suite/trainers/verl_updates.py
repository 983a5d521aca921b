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
the last. :func:`plan_updates` places verl's update boundaries among each process's rows
(:func:`update_row_ends`, proportionally, the same rows on every process) and cuts the micro-batches
at them (:func:`update_pieces`), so a micro-batch may hold the ends of several updates and a
generation batch takes verl's number of optimizer steps whatever its number of micro-batches; each
update's loss is a token mean over its own rows times verl's weight. :class:`UpdateSteps` runs a
micro-batch's pieces as passes (each cut again to ``max_rows_per_pass``) and takes an update's
optimizer step after the backward pass of its last piece, through :func:`open_update_end` /
:func:`close_update_end`: under one process or DDP by :func:`step_optimizer` (gradients all-reduced
first), under DeepSpeed ZeRO-2/3 by making that backward pass a gradient-accumulation boundary (the
engine steps), under FSDP2 by turning the gradient reduce-scatter on for it
(tests/trainers/test_engine_updates.py runs all four on two CPU processes against one process,
with more updates than micro-batches). The old log-probs are those of the rollout policy, so PPO
clipping acts from the second update on. The learning-rate scheduler still steps once per
generation batch, as verl's does once per training step.

Departures, printed at the start of a run (:func:`schedule_departures`): an update's loss is a token
mean over all its rows; padding rows are all-masked rows, not duplicates (the duplicates are
counted in the schedule and in the last update's weight, but their tokens are not trained twice).
Only a generation batch with fewer rows per process than updates (a mini-batch below the padding)
takes fewer updates, one per row, with a warning when it happens.

:func:`low_var_kl` is verl's ``low_var_kl`` estimator: TRL's k3 term clamped to [-10, 10].
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import torch
from torch import Tensor

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.trainers.memory_bound import backward_kwargs, hold_gradient_sync, row_passes

logger = logging.getLogger(__name__)

CONFORMANCE = MethodConformance(
    name="verl_schedule", subject="verl-agent's update schedule (rows_per_update)",
    upstream="github.com/ZJU-REAL/SDAR (its verl-agent copy)", version="8b85c231df3b384131132f174f0cd893fb58b509",
    checks=("each config's rows_per_update / pad_rows_per_process reproduce adjust_batch's padding, "
            "DataProto.chunk's split and update_policy's mini-batches and loss weights for its script's settings, "
            "on 1, 2 and 8 processes",
            "the trainer's planner takes verl-agent's number of optimizer steps per generation batch, with no cap "
            "at the number of micro-batches"),
    tests=("tests/conformance/test_verl_schedule.py",))
"""What ``tests/conformance/`` checks of this schedule against verl-agent's own code (declared by the
trainer part that runs it, :class:`~agentgym_suite.trainers.micro_batch_loss.MicroBatchLoss`)."""

UPDATE_SCALE = "update_loss_scale"
"""0-dim tensor on each pass: generation-batch tokens / tokens of the update it belongs to, times
the update's weight (turns TRL's generation-wide token mean into the update's own)."""
UPDATE_SHARE = "update_micro_batch_scale"
"""0-dim tensor on each pass, for losses that are token means over the pass's micro-batch divided by
the accumulation steps (the plug-ins' auxiliary losses): micro-batches per generation batch x the
piece's tokens / this process's tokens of the update, times the update's weight (a token mean over
the update's rows)."""


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


def update_row_ends(schedule: VerlSchedule, local_rows: int) -> list[int]:
    """Where each update of one epoch of ``schedule`` ends among a process's ``local_rows`` rows
    (exclusive ends, the last ``local_rows``): at the row nearest verl's row boundary, every update at
    least one row. Every process has the same row count, so every process cuts at the same rows.
    Only with more updates than rows (a mini-batch smaller than the padding) are updates merged,
    one per row (:func:`plan_updates` warns)."""
    per_epoch = _epoch_updates(schedule)
    local_rows = max(local_rows, 1)
    if per_epoch >= local_rows:
        return list(range(1, local_rows + 1))
    ends: list[int] = []
    done, previous = 0, 0
    for j, size in enumerate(schedule.update_rows[:per_epoch]):
        done += size
        end = round(local_rows * done / schedule.padded_rows)
        end = min(max(end, previous + 1), local_rows - (per_epoch - 1 - j))
        ends.append(end)
        previous = end
    return ends


@dataclass(frozen=True)
class UpdatePiece:
    """Consecutive rows of one micro-batch that belong to one update."""

    micro_batch: int
    start: int
    """First row, counted within the micro-batch."""
    stop: int
    """Row after the last, within the micro-batch."""
    update: int
    ends_update: bool
    """The update's last rows: its optimizer step follows this piece's backward pass."""


def update_pieces(micro_batch_rows: list[int], row_ends: list[int]) -> list[UpdatePiece]:
    """The micro-batches (``micro_batch_rows`` rows each, in order) cut at every update's end
    (``row_ends``: exclusive ends over all the micro-batches' rows, the last one their total, as
    :func:`update_row_ends` gives), so every update boundary is a piece boundary, however many
    updates a micro-batch holds."""
    if not row_ends or row_ends[-1] != sum(micro_batch_rows):
        raise ValueError(f"the last update must end at the last row ({sum(micro_batch_rows)}), got ends {row_ends}")
    pieces: list[UpdatePiece] = []
    offset, update = 0, 0
    for k, count in enumerate(micro_batch_rows):
        start = 0
        while start < count:
            while row_ends[update] <= offset + start:
                update += 1
            stop = min(count, row_ends[update] - offset)
            pieces.append(UpdatePiece(k, start, stop, update, ends_update=offset + stop == row_ends[update]))
            start = stop
        offset += count
    return pieces


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


PLAN = "update_plan"
"""Key of the :class:`MicroBatchPlan` on each micro-batch of a planned generation batch."""


@dataclass(frozen=True)
class PlannedPiece:
    """A piece of a micro-batch with its update's loss scales (:data:`UPDATE_SCALE`, :data:`UPDATE_SHARE`)."""

    piece: UpdatePiece
    scale: float
    share: float
    trainer_steps: bool
    """The generation batch's last piece: the trainer takes its update's step itself."""


@dataclass(frozen=True)
class MicroBatchPlan:
    """The pieces one micro-batch is cut into (:func:`update_pieces`), in row order."""

    pieces: tuple[PlannedPiece, ...]


def plan_updates(chunks: list[dict[str, Any]], rows: int, rows_per_update: int, sync: Any,
                 pad_rows_per_process: int | None = None) -> int:
    """Plan verl-agent's updates over the micro-batches of a generation batch (``chunks``, this
    process's share, in TRL's order) and return how many optimizer steps they take.

    ``rows``: real rows of the generation batch over all processes; ``sync``: the processes'
    collectives (token counts are summed over processes so every process plans the same updates).
    The updates end at the rows :func:`update_row_ends` gives, inside a micro-batch where verl's
    boundary falls there, so a generation batch takes ``ceil(padded rows / rows_per_update)`` steps
    however many micro-batches it has. Each micro-batch gets a :class:`MicroBatchPlan` under :data:`PLAN`.
    """
    processes = int(getattr(sync, "world_size", 1) or 1)
    schedule = verl_schedule(rows, max(rows_per_update, processes), processes, pad_rows_per_process)
    ends = update_row_ends(schedule, sum(int(c["completion_mask"].shape[0]) for c in chunks))
    merged = _epoch_updates(schedule) > len(ends)
    if merged:
        logger.warning("this generation batch has %d rows per process for verl-agent's %d updates: it takes %d "
                       "updates, one per row (rows_per_update=%d is below the padding)", len(ends),
                       _epoch_updates(schedule), len(ends), rows_per_update)
    weights = [1.0] * len(ends) if merged else list(schedule.loss_weights[:len(ends)])
    plan_rows(chunks, ends, weights, sync)
    return len(ends)


def plan_rows(chunks: list[dict[str, Any]], row_ends: list[int], weights: list[float], sync: Any) -> None:
    """Put on every micro-batch of ``chunks`` its pieces (cut at ``row_ends``, see :func:`update_pieces`)
    with their update's loss scales: :data:`UPDATE_SCALE` makes the policy loss a token mean over the
    update's rows (all processes) times its weight, :data:`UPDATE_SHARE` makes an auxiliary loss a
    token mean over the update's rows of this process times its weight."""
    sizes = [int(c["completion_mask"].shape[0]) for c in chunks]
    pieces = update_pieces(sizes, row_ends)
    row_tokens = [_trained_tokens(c, per_row=True).double().cpu() for c in chunks]
    piece_tokens = [float(row_tokens[p.micro_batch][p.start:p.stop].sum()) for p in pieces]
    local = [0.0] * len(row_ends)
    for piece, tokens in zip(pieces, piece_tokens):
        local[piece.update] += tokens
    overall = list(local)
    if getattr(sync, "distributed", False):
        overall = [sum(column) for column in zip(*sync.gather(local))]
    total = sum(overall)
    count = len(chunks)
    planned: list[list[PlannedPiece]] = [[] for _ in chunks]
    for i, (piece, tokens) in enumerate(zip(pieces, piece_tokens)):
        weight = weights[piece.update]
        scale = total / overall[piece.update] * weight if overall[piece.update] > 0 else 0.0
        share = count * weight * tokens / local[piece.update] if local[piece.update] > 0 else 0.0
        planned[piece.micro_batch].append(PlannedPiece(piece, scale, share, trainer_steps=i == len(pieces) - 1))
    for chunk, mine in zip(chunks, planned):
        chunk[PLAN] = MicroBatchPlan(tuple(mine))
        chunk.pop(UPDATE_SCALE, None)
        chunk.pop(UPDATE_SHARE, None)


def update_passes(inputs: dict[str, Any], bound: int | None) -> list[tuple[dict[str, Any], PlannedPiece | None]]:
    """A planned micro-batch's passes: each piece's rows cut into passes of at most ``bound`` rows
    (:func:`~agentgym_suite.trainers.memory_bound.row_passes`), each pass carrying its update's loss
    scales, paired with its piece where the pass is the piece's last (None otherwise)."""
    plan: MicroBatchPlan = inputs[PLAN]
    rows = int(inputs["completion_mask"].shape[0])
    if not plan.pieces:  # a micro-batch without rows (the trainer's padding gives every one at least one)
        return [(p, None) for p in row_passes(inputs, bound)]
    out: list[tuple[dict[str, Any], PlannedPiece | None]] = []
    for planned in plan.pieces:
        piece = planned.piece
        part = inputs if (piece.start, piece.stop) == (0, rows) else _row_range(inputs, piece.start, piece.stop, rows)
        device = inputs["completion_mask"].device
        part = {**part, UPDATE_SCALE: torch.tensor(planned.scale, device=device),
                UPDATE_SHARE: torch.tensor(planned.share, device=device)}
        passes = row_passes(part, bound)
        out += [(p, planned if i == len(passes) - 1 else None) for i, p in enumerate(passes)]
    return out


def _row_range(inputs: dict[str, Any], start: int, stop: int, rows: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        if isinstance(value, Tensor) and value.dim() > 0 and value.shape[0] == rows:
            out[key] = value[start:stop]
        elif isinstance(value, list) and len(value) == rows:
            out[key] = value[start:stop]
        else:
            out[key] = value
    return out


class UpdateSteps:
    """Runs a planned generation batch's updates for a trainer (``owner``): :meth:`loss` replaces the
    micro-batch's loss over passes and takes the optimizer step of every update that ends before its
    last pass; the step of an update ending with the micro-batch's last pass (but the generation
    batch's, which the trainer takes itself) follows the trainer's backward pass, in :meth:`finish`."""

    def __init__(self, owner: UpdateOwner) -> None:
        self.owner = owner
        self.pending: UpdateEnd | None = None
        self.grad_norms: list[float] = []

    def loss(self, inputs: dict[str, Any], bound: int | None, compute: Callable[[dict[str, Any]], Tensor],
             model: Any) -> Tensor:
        """The micro-batch's loss (as :func:`~agentgym_suite.trainers.memory_bound.loss_over_passes`):
        every pass but the last back-propagated here, an optimizer step after each that ends an update."""
        accelerator = self.owner.accelerator
        parts = update_passes(inputs, bound)
        done: Tensor | None = None
        for part, planned in parts[:-1]:
            loss = compute(part)
            with hold_gradient_sync(accelerator, model), torch.autocast(loss.device.type, enabled=False):
                end = open_update_end(self.owner) if planned is not None and planned.piece.ends_update else None
                if loss.requires_grad:
                    accelerator.backward(loss, **backward_kwargs(accelerator))
                if end is not None:
                    self._close(end)
            done = loss.detach() if done is None else done + loss.detach()
        part, planned = parts[-1]
        last = compute(part)
        if planned is not None and planned.piece.ends_update and not planned.trainer_steps:
            self.pending = open_update_end(self.owner)  # before the trainer's backward pass of ``last``
        return last if done is None else last + done

    def finish(self) -> list[float]:
        """Call after the trainer's backward pass: the pending update's step; returns the gradient
        norms of this micro-batch's steps (where this module clipped)."""
        end, self.pending = self.pending, None
        if end is not None:
            self._close(end)
        norms, self.grad_norms = self.grad_norms, []
        return norms

    def _close(self, end: UpdateEnd) -> None:
        norm = close_update_end(self.owner, end)
        if norm is not None:
            self.grad_norms.append(norm)


def schedule_departures(pad_rows_per_process: int | None) -> list[str]:
    """What this trainer's update schedule does differently from verl-agent's, as lines for the run's start."""
    lines = [
        "an update's loss is a token mean over all its rows (verl: a mean of per-micro-batch token means); "
        "an auxiliary loss likewise, over the process's rows of the update",
    ]
    if pad_rows_per_process:
        lines.append(f"adjust_batch's duplicated rows (to a multiple of {pad_rows_per_process} x processes) are "
                     "counted in the schedule and the last update's weight, but padded here with all-masked rows")
    return lines


def _trained_tokens(chunk: dict[str, Any], per_row: bool = False) -> Tensor:
    mask = chunk["completion_mask"]
    if chunk.get("tool_mask") is not None:
        mask = mask * chunk["tool_mask"]
    return mask.sum(dim=1) if per_row else mask.sum()


class UpdateOwner(Protocol):
    """What :func:`step_optimizer` needs of a trainer (public ``transformers.Trainer`` attributes)."""

    model: Any
    optimizer: Any
    accelerator: Any
    args: Any


@dataclass
class UpdateEnd:
    """What :func:`open_update_end` changed for the backward pass that ends an update (a piece's last pass)."""

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
    """Call before the backward pass that ends an update inside the accumulation window (the last
    pass of an update's last piece, :class:`UpdateSteps`). DeepSpeed (ZeRO-2/3): that backward pass
    is made a gradient-accumulation boundary (accelerate then reduces the gradients and calls ``engine.step()``: clipping to ``gradient_clipping``, the
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


def check_update_setup(*, fp16_scaler: bool, fsdp_version: int | None = None) -> None:
    """Refuse ``rows_per_update`` with fp16 loss scaling (a skipped step would desynchronise the
    updates) and under FSDP1 (``fsdp_version`` 1: its gradients between micro-batches are neither
    reduced nor whole, so an optimizer step there is wrong); one process, DDP, DeepSpeed ZeRO-2/3
    and FSDP2 all take its optimizer steps."""
    if fp16_scaler:
        raise ValueError("rows_per_update does not support fp16 loss scaling; use bf16 (or fp32).")
    if fsdp_version == 1:
        raise ValueError("rows_per_update takes optimizer steps between micro-batches, which FSDP1 cannot; use FSDP2 "
                         "(fsdp_version: 2 in the accelerate config, as configs/accelerate/fsdp.yaml has) or DeepSpeed "
                         "ZeRO-2/3 (configs/accelerate/zero3.yaml).")

"""verl-agent's update schedule and loss terms, on top of TRL's GRPO step.

verl cuts each training step's rows into mini-batches of ``ppo_mini_batch_size * rollout.n``
rows and takes one optimizer step per mini-batch, the loss of each a token mean over its own
rows; the old log-probs are those of the rollout policy, so PPO clipping acts from the second
update on. ``rows_per_update`` does the same here: TRL cuts the generation batch into
``steps_per_generation`` micro-batches and (with ``gradient_accumulation_steps`` set equal)
steps the optimizer once after the last; :func:`plan_updates` groups the micro-batches into
``ceil(rows / rows_per_update)`` consecutive updates of near-equal size, and
:func:`step_optimizer` takes the earlier updates' optimizer steps in between (gradients
all-reduced first when several DDP processes accumulate without syncing). The learning-rate
scheduler still steps once per generation batch, as verl's does once per training step.

:func:`low_var_kl` is verl's ``low_var_kl`` estimator: TRL's k3 term clamped to [-10, 10].
"""

from __future__ import annotations

import math
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


def updates_for(rows: int, rows_per_update: int, micro_batches: int) -> int:
    """Optimizer updates for a generation batch of ``rows`` real rows: ``ceil(rows / rows_per_update)``,
    at least 1 and at most one per micro-batch."""
    return max(1, min(micro_batches, math.ceil(max(rows, 1) / rows_per_update)))


def update_of(chunk: int, updates: int, micro_batches: int) -> int:
    """The update micro-batch ``chunk`` belongs to: consecutive micro-batches, near-equal counts."""
    return chunk * updates // micro_batches


def plan_updates(chunks: list[dict[str, Any]], rows: int, rows_per_update: int, sync: Any) -> set[int]:
    """Tag every micro-batch of a generation batch with its update's loss scales and return the
    indices of the micro-batches that end an update (the last one included).

    ``rows``: real rows of the generation batch over all processes; ``sync``: the processes'
    collectives (token counts are summed over processes so every process plans the same updates).
    """
    count = len(chunks)
    updates = updates_for(rows, rows_per_update, count)
    local = [float(_trained_tokens(c)) for c in chunks]
    tokens = torch.tensor(local, dtype=torch.float64)
    if getattr(sync, "distributed", False):
        tokens = torch.tensor(sync.gather(local), dtype=torch.float64).sum(dim=0)
    members: dict[int, list[int]] = {}
    for k in range(count):
        members.setdefault(update_of(k, updates, count), []).append(k)
    total = float(tokens.sum())
    for ks in members.values():
        update_tokens = float(tokens[ks].sum())
        for k in ks:
            device = chunks[k]["completion_mask"].device
            chunks[k][UPDATE_SCALE] = torch.tensor(total / update_tokens if update_tokens > 0 else 0.0, device=device)
            chunks[k][UPDATE_SHARE] = torch.tensor(count / len(ks), device=device)
    return {ks[-1] for ks in members.values()}


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


def step_optimizer(owner: UpdateOwner) -> float | None:
    """One optimizer update in the middle of TRL's accumulation window: gradients averaged over
    processes (they were accumulated without syncing), clipped to ``max_grad_norm``, stepped, zeroed.
    The accelerate wrapper skips steps outside a sync step, so the wrapped optimizer is stepped.
    Returns the gradient norm before clipping (None without ``max_grad_norm``)."""
    params = [p for p in owner.model.parameters() if p.requires_grad]
    accelerator = owner.accelerator
    if accelerator.num_processes > 1:
        for p in params:
            if p.grad is not None:
                torch.distributed.all_reduce(p.grad)
                p.grad.div_(accelerator.num_processes)
    norm = None
    if owner.args.max_grad_norm and owner.args.max_grad_norm > 0:
        norm = float(torch.nn.utils.clip_grad_norm_(params, owner.args.max_grad_norm))
    optimizer = getattr(owner.optimizer, "optimizer", owner.optimizer)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return norm


def check_update_setup(*, deepspeed: bool, fsdp: bool, fp16_scaler: bool) -> None:
    """Refuse ``rows_per_update`` where the trainer cannot take optimizer steps between micro-batches
    (``deepspeed``/``fsdp``: the run is sharded by them; ``fp16_scaler``: fp16 loss scaling is on)."""
    if deepspeed or fsdp:
        raise ValueError(
            "rows_per_update takes optimizer steps between micro-batches, which DeepSpeed and FSDP do not allow "
            "from outside their own step. Run on one process or DDP, or set rows_per_update: null and "
            "optimizer_steps_per_generation to the number of updates the rows of a generation batch give "
            "(rows / rows_per_update).")
    if fp16_scaler:
        raise ValueError("rows_per_update does not support fp16 loss scaling; use bf16 (or fp32).")

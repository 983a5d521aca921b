"""Bounded memory per pass, and a loss that is right for any number of rows.

Multi-turn episodes give a generation batch as many rows as they have turns, so the rows of
one micro-batch (``(this process's rows) / steps_per_generation``) grow with episode length.
``max_rows_per_pass`` bounds them: a micro-batch is cut into passes of at most that many rows
(rows of similar length together), each pass's loss is back-propagated at once, and the
gradients accumulate inside the training step (:func:`hold_gradient_sync` keeps DDP from
reducing and DeepSpeed from stepping until the last pass). The no-gradient log-prob passes
use the same bound. Every process runs the same number of passes: the trainer pads every
process's rows to the same count, so ``ceil(rows / bound)`` is the same everywhere.

The number of rows also varies between generation batches and processes, and the trainer pads
them with all-masked rows. TRL's losses aggregate in three ways, and :func:`policy_loss_scale`
makes each of them independent of padding and of how rows are cut into passes:

* ``dapo``, ``cispo``, ``vespo`` sum tokens and divide by the generation batch's token count
  (``num_items_in_batch``): already right, scale 1;
* ``grpo``, ``sapo``, ``luspo`` (row means) and ``dr_grpo`` (row sums over a constant length)
  average over the rows TRL sees. The scale turns that average into a sum over the pass's rows
  divided by the real rows of the whole generation batch (all processes), as TRL's own
  per-row average is on equal-sized batches, so padding rows no longer dilute the loss;
* ``bnpo`` divides by the micro-batch's own token count; a pass is scaled by its share of the
  micro-batch's tokens.

The plug-ins' auxiliary losses (token means over the micro-batch) are weighted the same way
as ``bnpo``. TRL's entropy bonus and MoE router loss are normalised per call and cannot be
rescaled apart from the policy loss; :func:`check_loss_settings` refuses them where they would
be wrong.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import torch
from torch import Tensor

TOKEN_SUM_LOSSES = ("dapo", "cispo", "vespo")
"""TRL loss types normalised by the generation batch's token count."""
ROW_MEAN_LOSSES = ("grpo", "sapo", "luspo", "dr_grpo")
"""TRL loss types that average (or, for dr_grpo, sum over a fixed length) per row of the batch TRL sees."""
LOCAL_TOKEN_LOSSES = ("bnpo",)
"""TRL loss types normalised by the token count of the micro-batch TRL sees."""
LOSS_TYPES = TOKEN_SUM_LOSSES + ROW_MEAN_LOSSES + LOCAL_TOKEN_LOSSES

MICRO_TOKENS = "micro_batch_tokens"
"""Key of the 0-dim tensor each pass carries: trained tokens of the micro-batch it was cut from."""
GLOBAL_ROWS = "num_rows_in_batch"
"""Key of the 0-dim tensor with the real (not padding) rows of the generation batch over all processes."""


def check_loss_settings(loss_type: str, *, bounded: bool, entropy_bonus: bool, router_aux_loss: bool) -> None:
    """Refuse loss settings whose aggregation cannot be made right for variable row counts."""
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type={loss_type!r} is not known to this trainer; choose one of {', '.join(LOSS_TYPES)}.")
    rescaled = bounded or loss_type not in TOKEN_SUM_LOSSES
    if entropy_bonus and rescaled:
        raise ValueError(
            "TRL's entropy bonus (entropy_coef / use_adaptive_entropy) is normalised per forward pass, so it cannot be "
            f"kept right with loss_type={loss_type}{' and max_rows_per_pass' if bounded else ''}: rows per pass vary "
            "with episode length. Use loss_type dapo (the default) without max_rows_per_pass, or entropy_coef 0."
        )
    if router_aux_loss and rescaled:
        raise ValueError(
            "the MoE router loss (router_aux_loss_coef) is averaged per forward pass and would be counted once per "
            f"pass with loss_type={loss_type}{' and max_rows_per_pass' if bounded else ''}. Use loss_type dapo "
            "without max_rows_per_pass, or router_aux_loss_coef 0."
        )


def passes_for(rows: int, bound: int | None) -> int:
    """Number of passes a micro-batch of ``rows`` rows is cut into (1 without a bound)."""
    return 1 if bound is None or rows <= bound else math.ceil(rows / bound)


def row_passes(inputs: dict[str, Any], bound: int | None) -> list[dict[str, Any]]:
    """The micro-batch cut into passes of at most ``bound`` rows, longest rows first, each carrying
    the micro-batch's trained-token count (:data:`MICRO_TOKENS`). Without a bound, or with few
    enough rows, the micro-batch itself is the one pass."""
    mask = _loss_mask(inputs)
    rows = int(mask.shape[0])
    tokens = mask.sum().detach()
    count = passes_for(rows, bound)
    if count == 1:
        return [{**inputs, MICRO_TOKENS: tokens}]
    lengths = inputs["prompt_mask"].sum(1) + inputs["completion_mask"].sum(1)
    order = torch.argsort(lengths, descending=True, stable=True)
    return [{**_take(inputs, index, rows), MICRO_TOKENS: tokens} for index in torch.tensor_split(order, count)]


def _take(inputs: dict[str, Any], index: Tensor, rows: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        if isinstance(value, Tensor) and value.dim() > 0 and value.shape[0] == rows:
            out[key] = value[index.to(value.device)]
        elif isinstance(value, list) and len(value) == rows:
            out[key] = [value[int(i)] for i in index]
        else:
            out[key] = value
    return out


def _loss_mask(inputs: dict[str, Any]) -> Tensor:
    mask = inputs["completion_mask"]
    return mask * inputs["tool_mask"] if inputs.get("tool_mask") is not None else mask


def policy_loss_scale(loss_type: str, inputs: dict[str, Any], *, processes: int, steps_per_generation: int) -> float:
    """Factor that turns TRL's loss on ``inputs`` (one pass) into its share of the loss over the
    generation batch's real rows (see the module docstring)."""
    if loss_type in ROW_MEAN_LOSSES:
        rows = int(inputs["completion_mask"].shape[0])
        total = max(int(inputs[GLOBAL_ROWS]), 1)
        return rows * processes * steps_per_generation / total
    if loss_type in LOCAL_TOKEN_LOSSES:
        return pass_token_share(inputs)
    return 1.0


def pass_token_share(inputs: dict[str, Any]) -> float:
    """The pass's trained tokens over its micro-batch's (1 when the pass is the whole micro-batch)."""
    micro = float(inputs.get(MICRO_TOKENS, 0) or 0)
    if micro <= 0:
        return 1.0
    return float(_loss_mask(inputs).sum()) / micro


def loss_over_passes(passes: list[dict[str, Any]], compute: Callable[[dict[str, Any]], Tensor], accelerator: Any,
                     model: Any) -> Tensor:
    """The loss of a micro-batch cut into passes: every pass but the last is back-propagated here
    (gradients held back from syncing), the last is returned for the trainer to back-propagate,
    plus the earlier passes' (detached) losses so the returned value is the whole loss."""
    done: Tensor | None = None
    for part in passes[:-1]:
        loss = compute(part)
        if loss.requires_grad:
            with hold_gradient_sync(accelerator, model), torch.autocast(loss.device.type, enabled=False):
                accelerator.backward(loss, **backward_kwargs(accelerator))
        done = loss.detach() if done is None else done + loss.detach()
    last = compute(passes[-1])
    return last if done is None else last + done


@contextmanager
def hold_gradient_sync(accelerator: Any, model: Any) -> Iterator[None]:
    """Accumulate gradients without reducing them across processes (DDP ``no_sync``) and without
    a DeepSpeed optimizer step, for every pass but the last of a training step that syncs."""
    if not accelerator.sync_gradients:
        yield
        return
    accelerator.gradient_state._set_sync_gradients(False)
    try:
        with accelerator.no_sync(model):
            yield
    finally:
        accelerator.gradient_state._set_sync_gradients(True)


def backward_kwargs(accelerator: Any) -> dict[str, Any]:
    """Keyword arguments transformers' ``Trainer.training_step`` gives ``accelerator.backward``."""
    from accelerate.utils import DistributedType

    return {"scale_wrt_gas": False} if accelerator.distributed_type == DistributedType.DEEPSPEED else {}


def padding_rows(real: int, processes_max: int, multiple: int) -> int:
    """Rows to add to ``real`` rows so every process has ``processes_max`` rounded up to ``multiple``
    (and at least one row per split)."""
    target = max(processes_max, 1)
    target = math.ceil(target / multiple) * multiple
    return target - real

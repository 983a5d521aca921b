"""Several training processes as one: one global batch for credit, and every process in step.

A multi-process run (``accelerate launch``/``torchrun``; DDP, DeepSpeed ZeRO-3 or FSDP) gives
each process a contiguous share of every generation batch. Two things follow:

* **Credit over the global batch.** A GRPO group (the G rollouts of one task) may straddle
  processes, and every group statistic (GRPO/Dr. GRPO baselines, GiGPO anchor groups, AgentOPSD
  priors, EnvACE role groups, SkillRise positions) must see all of its rows.
  :func:`credit_over_processes` gathers what ``CreditAssigner.advantages`` reads from every
  process (one collective), computes the advantages on the whole batch, identically on every
  process, and keeps this process's rows. A plug-in's own inputs (``CreditBatch.extras``) travel with the
  fields. The result equals a single-process run on the same
  episodes. The inputs of the auxiliary loss alone (``CreditBatch.aux_extras``, e.g. the ``(R, T, K)``
  teacher logits of distillation plug-ins) feed a loss that runs on each process's own rows, so they
  are not gathered: the merged batch carries ``(R, 0)`` placeholders under their names.
* **Lockstep.** Under ZeRO-3 and FSDP every forward pass (and, through ``synced_gpus``, every
  generation step) is a collective, and vLLM's server mode gathers every generation call's
  prompts; a process that makes one call fewer than the others hangs the run. The rollout
  engine asks :meth:`ProcessSync.any` once per turn whether any process still plays, and a
  process with nothing left makes an empty generation call (:class:`LockstepBackend`). The
  trainer pads every process's rows to the same count (:meth:`ProcessSync.max`), so the
  log-prob passes, micro-batches and row-bounded passes are the same number everywhere.

With one process every method here is local and calls no collective.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import Tensor

from agentgym_suite.llm.base import Sample, SamplingParams
from agentgym_suite.rollout.episodes import describe_error
from agentgym_suite.trainers.credit import CreditAssigner, CreditBatch

class ProcessSync:
    """The few collectives the trainer makes, over the accelerator's processes.

    Args:
        accelerator: an ``accelerate.Accelerator`` (None: a single process).
    """

    def __init__(self, accelerator: Any = None) -> None:
        self.accelerator = accelerator
        self.world_size = int(getattr(accelerator, "num_processes", 1) or 1)
        self.rank = int(getattr(accelerator, "process_index", 0) or 0)

    @property
    def distributed(self) -> bool:
        """True with more than one process."""
        return self.world_size > 1

    def _device(self) -> torch.device:
        return torch.device(getattr(self.accelerator, "device", "cpu"))

    def max(self, value: int) -> int:
        """The largest ``value`` over all processes."""
        if not self.distributed:
            return int(value)
        tensor = torch.tensor([int(value)], dtype=torch.long, device=self._device())
        torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MAX)
        return int(tensor.item())

    def any(self, flag: bool) -> bool:
        """True when ``flag`` is true on any process."""
        return self.max(int(bool(flag))) > 0

    def gather(self, obj: Any) -> list[Any]:
        """``obj`` of every process, in rank order (picklable objects; tensors should be on the CPU)."""
        if not self.distributed:
            return [obj]
        out: list[Any] = [None] * self.world_size
        torch.distributed.all_gather_object(out, obj)
        return out

    def mean_metrics(self, values: dict[str, list[float]]) -> dict[str, float]:
        """Per key, the mean over every process's values (a process without the key counts for
        nothing; NaNs are left out). Keys are agreed on first, so every process makes the same calls."""
        local = {k: [float(v) for v in vs if v == v] for k, vs in values.items()}
        if not self.distributed:
            return {k: sum(vs) / len(vs) for k, vs in local.items() if vs}
        keys = sorted(set().union(*[set(k) for k in self.gather(sorted(local))]))
        if not keys:
            return {}
        sums = torch.tensor([[sum(local.get(k, [])), len(local.get(k, []))] for k in keys], dtype=torch.float64,
                            device=self._device())
        torch.distributed.all_reduce(sums, op=torch.distributed.ReduceOp.SUM)
        return {k: float(s / n) for k, (s, n) in zip(keys, sums.tolist()) if n > 0}


# ---------------------------------------------------------------------------------- credit
@dataclass
class GlobalCredit:
    """What :func:`credit_over_processes` returns."""

    advantages: Tensor
    """``(R, T)`` advantages of this process's rows."""
    metrics: dict[str, float]
    """The plug-in's metrics over every process's rows."""
    total_rows: int
    """Rows over every process."""


def credit_over_processes(credit: CreditAssigner, local: CreditBatch, sync: ProcessSync,
                          task_ids: Sequence[Hashable] | None = None) -> GlobalCredit:
    """Advantages of this process's rows, computed by ``credit`` on every process's rows at once.

    One collective (a gather of the rows' credit fields and, when given, their ``task_ids``, which
    :func:`check_groups` reads). Every process computes the same advantages over the merged batch
    and keeps its own slice, so the result does not depend on how the batch was split between
    processes. Metrics are those of the merged batch.
    """
    gathered = sync.gather((portable_batch(local), None if task_ids is None else list(task_ids)))
    merged, offsets = merge_credit_batches([part for part, _ in gathered])
    if task_ids is not None:
        check_groups(merged.group_ids, [task for _, tasks in gathered for task in tasks])
    out = credit.advantages(merged)
    rows, width = local.completion_mask.shape
    start = offsets[sync.rank]
    mine = out.advantages[start : start + rows, :width].to(local.completion_mask.device)
    return GlobalCredit(mine, dict(out.metrics), merged.num_rows)


def portable_batch(batch: CreditBatch) -> dict[str, Any]:
    """The batch's fields as plain CPU values; of ``aux_extras`` (not gathered) only the names."""
    out: dict[str, Any] = {}
    for f in fields(batch):
        value = getattr(batch, f.name)
        if f.name == "aux_extras":
            out[f.name] = sorted(value)
        elif f.name == "extras":  # the plug-in's own inputs travel as the fields do
            out[f.name] = {k: v.detach().cpu() if isinstance(v, Tensor) else list(v) for k, v in value.items()}
        elif isinstance(value, Tensor):
            out[f.name] = value.detach().cpu()
        elif isinstance(value, (list, tuple)):
            out[f.name] = list(value)
        else:
            out[f.name] = value
    return out


def merge_credit_batches(parts: Sequence[dict[str, Any]]) -> tuple[CreditBatch, list[int]]:
    """One ``CreditBatch`` of the parts' rows in order (token axes right-padded with 0 to the widest
    part), and the row offset of each part."""
    widths = [int(p["completion_mask"].shape[1]) for p in parts]
    counts = [int(p["completion_mask"].shape[0]) for p in parts]
    width = max(widths) if widths else 0
    offsets = [sum(counts[:i]) for i in range(len(parts))]
    merged: dict[str, Any] = {}
    for name in parts[0]:
        values = [p[name] for p in parts]
        present = [v is not None for v in values]
        if not any(present):
            merged[name] = None
        elif not all(present):
            raise ValueError(f"credit batch field {name!r} is set on some processes and missing on others; every "
                             "process must run the same plug-in with the same settings.")
        elif name == "aux_extras":
            merged[name] = {key: torch.zeros(sum(counts), 0) for key in values[0]}
        elif name == "extras":
            keys = {tuple(sorted(v)) for v in values}
            if len(keys) > 1:
                raise ValueError(f"the credit inputs differ between processes ({sorted(keys)}); every process must "
                                 "run the same plug-in with the same settings.")
            merged[name] = {key: _merge_values([v[key] for v in values], width) for key in values[0]}
        else:
            merged[name] = _merge_values(values, width)
    return CreditBatch(**merged), offsets


def _merge_values(values: list[Any], width: int) -> Any:
    """The parts' values of one field in row order: ``(R, T)`` tensors right-padded to ``width``
    columns, other tensors and lists concatenated; anything else (the step) is the first part's."""
    if isinstance(values[0], Tensor) and values[0].dim() == 2:
        return torch.cat([_pad_columns(v, width) for v in values])
    if isinstance(values[0], Tensor):
        return torch.cat(values)
    if isinstance(values[0], list):
        return [x for v in values for x in v]
    return values[0]


def _pad_columns(value: Tensor, width: int) -> Tensor:
    if value.shape[1] == width:
        return value
    pad = torch.zeros(value.shape[0], width - value.shape[1], dtype=value.dtype)
    return torch.cat([value, pad], dim=1)


def check_groups(group_ids: Sequence[Hashable], task_ids: Sequence[Hashable]) -> None:
    """Raise when the rows of one group come from different tasks (``task_ids``, one per row): the
    generation batch was not split into whole, contiguous groups (a sampler or data-loader setting
    that reorders rows)."""
    seen: dict[Hashable, Hashable] = {}
    for group, task in zip(group_ids, task_ids):
        if seen.setdefault(group, task) != task:
            raise ValueError(
                f"group {group!r} holds rows of tasks {seen[group]!r} and {task!r}: the G rollouts of a task must be "
                "consecutive in the generation batch. Keep TRL's RepeatSampler and accelerate's default batch "
                "dispatch (no split_batches/dispatch_batches in accelerator_config)."
            )


# ---------------------------------------------------------------------------------- generation
class LockstepBackend:
    """A token backend that makes exactly one generation call per call it is given.

    A call with no prompts (this process has no running episode, others do) generates one
    token for a one-token prompt, so collectives inside generation (ZeRO-3/FSDP ``synced_gpus``)
    are matched; a failing call returns an error sample per prompt instead of raising, so the
    policy does not retry prompt by prompt (which would add calls on this process only).
    Everything else is forwarded to the wrapped backend.
    """

    def __init__(self, backend: Any, pad_token_id: int) -> None:
        self.backend = backend
        self.pad_token_id = int(pad_token_id)
        self.supports_token_prompts = True
        self.empty_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        """One call of the wrapped backend for the prompts (an empty one when there are none)."""
        if not prompt_ids:
            self.empty_calls += 1
            self.backend.generate_from_ids([[self.pad_token_id]], SamplingParams(max_new_tokens=1, seed=params.seed))
            return []
        try:
            return self.backend.generate_from_ids(prompt_ids, params)
        except Exception as exc:  # every prompt of the call fails; no per-prompt retry on this process alone
            error = describe_error(exc)
            return [[Sample(text="", finish_reason="error", has_token_ids=False, error=error)] for _ in prompt_ids]

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Sequence[Any] | None = None
                 ) -> list[list[Sample]]:
        """Render and tokenise the prompts with the wrapped backend, then :meth:`generate_from_ids`."""
        tool_lists = list(tools) if tools is not None else [None] * len(prompts)
        ids = [self.backend.encode(self.backend.render_prompt(p, t)) for p, t in zip(prompts, tool_lists)]
        return self.generate_from_ids(ids, params)


def world_model_lockstep_check(sync: ProcessSync, backend: Any, use_vllm: bool, backend_kind: Any) -> None:
    """Raise for the multi-process settings in which the policy cannot answer a rehearsal env's tool
    calls: it generates inside env steps, a data-dependent number of times per process, while there
    every generation call is a collective. ``backend_kind`` is TRL's ``DistributedBackend``."""
    if not sync.distributed:
        return
    if getattr(backend, "gathers_prompts", False):
        why = "vLLM's server mode (and tensor parallelism) gathers every generation call's prompts"
    elif not use_vllm and (backend_kind.is_zero3 or backend_kind.is_fsdp):
        why = "under ZeRO-3 and FSDP every transformers generation call is a collective (synced_gpus)"
    else:
        return
    raise RuntimeError(f"an env that borrows the policy (its policy_setting) generates with it inside env steps, but "
                       f"{why}, so processes would wait on each other forever. Use DDP, or vLLM colocate mode with "
                       "tensor parallel size 1, or give the env a model of its own instead of the policy.")

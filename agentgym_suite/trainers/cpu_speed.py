"""Training as fast as the CPU allows: the defaults a CPU run gets, each decided at run time.

Three settings, measured on the rl-gain step by ``benchmarks/cpu_train_speed.py`` (table in
docs/performance.md), apply when the trainer runs on the CPU (``use_cpu``, or no GPU):

* **bf16 autocast** (``cpu_bf16``) where the CPU executes bf16 natively (the ``avx512_bf16`` or
  ``amx_bf16`` flags): the weights, LoRA adapters and optimizer state stay fp32, the forward and
  backward matmuls run in bf16 (accelerate's ``torch.autocast``). On a CPU without those flags
  bf16 is emulated and slower, so ``auto`` keeps fp32 there. ``auto`` decides only when ``bf16``
  is not set (TRL would otherwise turn it on everywhere); ``on``/``off`` override both. The
  decision is logged at start.
* **No gradient checkpointing** (``cpu_gradient_checkpointing``): TRL turns it on by default,
  which recomputes every layer's forward in the backward pass. On the CPU ``auto`` turns it off
  for each forward/backward pass whose activations fit comfortably in memory
  (:class:`PassCheckpointing`, :func:`activations_fit`).
* **Length-sorted passes with the padding cut**: with ``max_rows_per_pass`` a micro-batch is cut
  into passes of rows of similar length (:mod:`~agentgym_suite.trainers.memory_bound`); each pass
  drops its leading prompt columns that are padding in every row (``batching.trim_left_padding``)
  and :func:`trim_completion_padding` its trailing completion columns, so neither side's padding
  is computed. The CPU recipes set ``max_rows_per_pass`` to :data:`CPU_ROWS_PER_PASS`.

The evaluation's batch bound is a budget field (``per_device_eval_batch_size``); the CPU recipes
set it to :data:`EVAL_BATCH` instead of one batch of every held-out episode.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CHOICES = ("auto", "on", "off")
"""Values of ``cpu_bf16`` and ``cpu_gradient_checkpointing``."""
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
"""``/proc/cpuinfo`` flags of CPUs that execute bf16 matrix arithmetic natively."""
CPU_ROWS_PER_PASS = 4
"""``max_rows_per_pass`` of the CPU recipes (the demo's GRPO stage, ``agentgym compare``'s base)."""
EVAL_BATCH = 16
"""Held-out episodes played at once by the CPU recipes (the demo's and ``agentgym compare``'s)."""
ACTIVATION_SHARE = 0.25
"""Gradient checkpointing stays on when one pass's estimated activations exceed this share of
the available memory."""


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags (empty where ``/proc/cpuinfo`` is not readable, e.g. macOS)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags") and ":" in line:
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def native_bf16(flags: frozenset[str] | set[str]) -> str | None:
    """The flag that makes bf16 native on this CPU, or None."""
    return next((flag for flag in NATIVE_BF16_FLAGS if flag in flags), None)


def runs_on_cpu(args: Any) -> bool:
    """True when the trainer will run on the CPU: ``use_cpu``, or no CUDA/XPU/MPS device."""
    if getattr(args, "use_cpu", False):
        return True
    import torch

    has_xpu = hasattr(torch, "xpu") and torch.xpu.is_available()
    has_mps = hasattr(torch.backends, "mps") and torch.backends.mps.is_available()
    return not (torch.cuda.is_available() or has_xpu or has_mps)


def _choice(name: str, value: str) -> str:
    if value not in CHOICES:
        raise ValueError(f"{name} must be one of {', '.join(CHOICES)} (got {value!r}).")
    return value


def decide_bf16(setting: str, flags: frozenset[str] | set[str]) -> tuple[bool, str]:
    """Whether a CPU run autocasts to bf16 under ``cpu_bf16 = setting``, and why (for the log)."""
    _choice("cpu_bf16", setting)
    if setting != "auto":
        return setting == "on", f"cpu_bf16={setting}"
    flag = native_bf16(flags)
    if flag:
        return True, f"this CPU has {flag} (cpu_bf16=auto; cpu_bf16: off keeps fp32)"
    return False, "this CPU has no native bf16 (no avx512_bf16/amx_bf16; cpu_bf16=auto; cpu_bf16: on forces it)"


def resolve_cpu_bf16(args: Any) -> None:
    """Set ``args.bf16`` of a CPU run from ``args.cpu_bf16`` and log the decision. Called by the
    config before TRL's own validation; GPU runs, and ``auto`` with ``bf16`` set, keep ``bf16``."""
    setting = _choice("cpu_bf16", args.cpu_bf16)
    _choice("cpu_gradient_checkpointing", args.cpu_gradient_checkpointing)
    if not runs_on_cpu(args) or (setting == "auto" and args.bf16 is not None):
        return
    use, why = decide_bf16(setting, cpu_flags())
    args.bf16 = use
    if use:
        args.fp16 = False
    logger.warning("CPU training: bf16 autocast %s: %s.", "on" if use else "off", why)


def activation_bytes(model_config: Any, rows: int, tokens: int) -> int:
    """Rough fp32 activation memory of one forward+backward pass without gradient checkpointing:
    per token and layer, the hidden states saved by attention and the MLP (about 16 hidden-sized
    and 4 intermediate-sized vectors), plus the logits and their gradient (3 vocabulary-sized
    vectors per token). Deliberately generous; it only decides whether checkpointing is needed."""
    hidden = int(getattr(model_config, "hidden_size", 0) or 0)
    layers = int(getattr(model_config, "num_hidden_layers", 0) or 0)
    inter = int(getattr(model_config, "intermediate_size", 0) or 4 * hidden)
    vocab = int(getattr(model_config, "vocab_size", 0) or 0)
    per_token = 4 * (layers * (16 * hidden + 4 * inter) + 3 * vocab)
    return per_token * rows * tokens


def available_memory(path: str = "/proc/meminfo") -> int | None:
    """``MemAvailable`` in bytes, or None where it cannot be read."""
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def activations_fit(model_config: Any, rows: int, tokens: int, available: int | None) -> bool:
    """True when one pass's activations (:func:`activation_bytes`) take at most
    :data:`ACTIVATION_SHARE` of ``available`` bytes (False when either is unknown)."""
    needed = activation_bytes(model_config, rows, tokens)
    return bool(available) and needed > 0 and needed <= ACTIVATION_SHARE * int(available or 0)


class PassCheckpointing:
    """Gradient checkpointing per forward/backward pass of a CPU run (``cpu_gradient_checkpointing``).

    The model keeps TRL's setting; :meth:`context` wraps one pass's forward: ``off`` runs every
    pass without checkpointing, ``auto`` the passes whose activations fit (:func:`activations_fit`,
    from the pass's own rows and width), ``on`` (and any GPU run) leaves it as it is. A pass run
    without checkpointing keeps its activations for its backward, so only the forward needs the
    context. The first decision is logged."""

    def __init__(self, args: Any, model_config: Any) -> None:
        self.setting = _choice("cpu_gradient_checkpointing", args.cpu_gradient_checkpointing)
        self.active = runs_on_cpu(args) and bool(args.gradient_checkpointing) and self.setting != "on"
        self.model_config = model_config
        self.kwargs = args.gradient_checkpointing_kwargs
        self.last: bool | None = None
        """The last pass's decision: True = run without checkpointing (None before any pass)."""
        self._logged = False

    def without(self, inputs: dict[str, Any]) -> bool:
        """True when the pass ``inputs`` runs without gradient checkpointing."""
        if not self.active:
            self.last = False
            return False
        if self.setting == "off":
            self.last = True
            return True
        rows = int(inputs["prompt_mask"].shape[0])
        tokens = int(inputs["prompt_mask"].sum(1).max()) + int(inputs["completion_mask"].shape[1])
        fits = activations_fit(self.model_config, rows, tokens, available_memory())
        self.last = fits
        if not self._logged:
            self._logged = True
            logger.warning("CPU training: gradient checkpointing %s for a pass of %d rows x %d tokens (about %.1f GiB "
                           "of activations; cpu_gradient_checkpointing: on/off forces it).",
                           "off" if fits else "kept on", rows, tokens,
                           activation_bytes(self.model_config, rows, tokens) / 2**30)
        return fits

    def context(self, model: Any, inputs: dict[str, Any]) -> Any:
        """The context one pass's forward runs in."""
        if not self.without(inputs):
            return contextlib.nullcontext()
        from trl.models.utils import disable_gradient_checkpointing

        return disable_gradient_checkpointing(model, self.kwargs)


def _model_config(model: Any) -> Any:
    if not isinstance(model, (str, os.PathLike)):
        return getattr(model, "config", None)
    try:
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(str(model))
    except (OSError, ValueError):
        return None


def trim_completion_padding(inputs: dict[str, Any]) -> dict[str, Any]:
    """The pass without its trailing completion columns that are padding (``completion_mask`` 0)
    in every row. Causal attention means no real token attends to them and the loss masks them,
    so the loss and gradients are unchanged; every completion-wide tensor is cut the same way."""
    import torch

    mask = inputs["completion_mask"]
    width = int(mask.shape[1])
    used = mask.any(dim=0).nonzero()
    keep = max(int(used[-1]) + 1 if used.numel() else 1, 1)
    if keep >= width:
        return inputs
    rows = int(mask.shape[0])
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        if (not key.startswith("prompt") and isinstance(value, torch.Tensor) and value.dim() == 2
                and value.shape[0] == rows and value.shape[1] == width):
            out[key] = value[:, :keep]
        else:
            out[key] = value
    return out

"""FSDP2 (``torch.distributed.fsdp.fully_shard``) where ``accelerate`` would not run it: on a CPU-only machine.

``accelerate`` turns FSDP on only for GPU-like devices: asked for FSDP (``accelerate launch`` with an
FSDP config, or the ``fsdp`` training argument) on a machine without one, it leaves the run
``MULTI_CPU`` and every process trains its own whole copy, silently. This module holds the trainer's
answer to that and the stand-in that scripts without a trainer use:

* :func:`adopt_fsdp_on_cpu`, which ``AgentGRPOTrainer`` calls once its accelerator is made: where
  FSDP was asked for but the accelerator runs without it on the CPU, it turns accelerate's own
  FSDP2 path on (``accelerator.prepare`` then shards the model with ``fully_shard`` on a CPU device
  mesh over gloo, exactly as it does on GPUs), or, for FSDP1, refuses with what to do. So
  ``accelerate launch --config_file configs/accelerate/fsdp2_cpu.yaml -m agentgym_suite.cli train …``
  trains sharded on the CPU (tests/trainers/test_engine_trainer.py checks the parameters really
  are sharded).
* :class:`Fsdp2Accelerator` and :func:`shard_model`, for scripts that drive the update schedule
  without ``transformers.Trainer`` under ``torchrun`` (``benchmarks/gpu_check.py``, the engine
  harness of ``tests/trainers/engine_update_worker.py``): what the trainer's loss passes
  (:class:`~agentgym_suite.trainers.verl_updates.UpdateSteps`) ask of ``accelerate`` for a model
  sharded with ``fully_shard`` by the script itself.

This module imports neither TRL nor transformers (the GPU check runs without TRL).
"""

from __future__ import annotations

import contextlib
import logging
import os
from types import SimpleNamespace
from typing import Any, Iterable, Iterator

import torch

from agentgym_suite.trainers.verl_updates import fsdp2_modules

logger = logging.getLogger(__name__)

CPU_CONFIG = "configs/accelerate/fsdp2_cpu.yaml"
"""The accelerate config that runs FSDP2 on CPU processes (gloo)."""


def fsdp_requested(args: Any) -> int | None:
    """The FSDP version the run asks for (1 or 2), or None: the ``fsdp`` training argument
    (``fsdp_config.version``), else ``accelerate launch``'s FSDP config (``ACCELERATE_USE_FSDP``,
    ``FSDP_VERSION``)."""
    plugin_args = getattr(args, "fsdp_plugin_args", None)
    if plugin_args:
        return int(plugin_args.get("fsdp_version", 1) or 1)
    if os.environ.get("ACCELERATE_USE_FSDP", "false").lower() == "true":
        return int(os.environ.get("FSDP_VERSION", "1") or 1)
    return None


def adopt_fsdp_on_cpu(accelerator: Any, args: Any) -> bool:
    """Turn accelerate's FSDP2 on for ``accelerator`` where the run asked for FSDP (:func:`fsdp_requested`)
    but accelerate left it off because the processes run on the CPU. Returns whether FSDP2 was turned
    on here. Call right after the accelerator is made, before anything is prepared.

    Raises ``ValueError`` for FSDP1 on the CPU (``FullyShardedDataParallel`` needs GPUs there): the
    message says to ask for FSDP2 or DeepSpeed instead."""
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

    version = fsdp_requested(args)
    if version is None or accelerator.distributed_type == DistributedType.FSDP:
        return False
    if accelerator.device.type != "cpu" or accelerator.distributed_type != DistributedType.MULTI_CPU:
        return False  # one process (nothing to shard), another engine (DeepSpeed), or a device accelerate shards
    if version != 2:
        raise ValueError(
            "FSDP was asked for on CPU processes, where accelerate runs FSDP1 not at all (each process would train "
            f"its own copy). Use FSDP2: fsdp_version: 2 in the accelerate config (see {CPU_CONFIG}), or DeepSpeed "
            "ZeRO-2/3 with DS_ACCELERATOR=cpu and ddp_backend: gloo (docs/training.md).")
    plugin_args = dict(getattr(args, "fsdp_plugin_args", None) or {})
    plugin_args["fsdp_version"] = 2
    plugin = FullyShardedDataParallelPlugin(**plugin_args)
    state = AcceleratorState()
    state.fsdp_plugin = plugin
    state.distributed_type = DistributedType.FSDP
    PartialState._shared_state["distributed_type"] = DistributedType.FSDP
    logger.info("FSDP2 on %d CPU processes: accelerate's fully_shard path on a CPU device mesh (gloo)",
                accelerator.num_processes)
    return True


def shard_model(model: torch.nn.Module, blocks: Iterable[torch.nn.Module], mesh: Any = None, **kwargs: Any
                ) -> list[Any]:
    """``fully_shard`` each of ``blocks`` (e.g. the decoder layers), then ``model`` itself, on ``mesh``
    (None: one over every process, on the CPU when no GPU is visible); ``kwargs`` go to ``fully_shard``
    (``mp_policy``...). Returns the sharded modules, outermost first."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    if mesh is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        mesh = init_device_mesh(device, (torch.distributed.get_world_size(),))
    for block in blocks:
        fully_shard(block, mesh=mesh, **kwargs)
    fully_shard(model, mesh=mesh, **kwargs)
    return fsdp2_modules(model)


def parameters_sharded(model: torch.nn.Module) -> bool:
    """Whether every parameter of ``model`` is a DTensor of which this process holds only a part."""
    params = list(model.parameters())
    return bool(params) and all(hasattr(p, "to_local") and p.to_local().numel() < p.numel() for p in params)


class Fsdp2Accelerator:
    """What the trainer's loss passes (:class:`~agentgym_suite.trainers.verl_updates.UpdateSteps`) ask
    of ``accelerate`` -- the gradient-sync state, ``no_sync`` and ``backward`` -- for a model a script
    sharded itself with ``fully_shard`` (:func:`shard_model`) or for one plain process, where
    accelerate runs no engine. ``no_sync`` turns the gradient reduce-scatter of ``sharded`` off, as
    accelerate's ``no_sync`` does for FSDP2."""

    deepspeed_engine_wrapped = None
    distributed_type = "NO"

    def __init__(self, sharded: list[Any]) -> None:
        self.sharded = sharded
        self.gradient_state = SimpleNamespace(sync_gradients=True)
        self.gradient_state._set_sync_gradients = lambda value: setattr(self.gradient_state, "sync_gradients", value)

    @property
    def sync_gradients(self) -> bool:
        """Whether this micro-batch's backward pass reduces the gradients (the accumulation window's last)."""
        return bool(self.gradient_state.sync_gradients)

    @contextlib.contextmanager
    def no_sync(self, model: Any) -> Iterator[None]:
        """Backward passes inside accumulate gradients without reducing them over processes."""
        for module in self.sharded:
            module.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            for module in self.sharded:
                module.set_requires_gradient_sync(True)

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """``loss.backward()`` (accelerate's keyword arguments are accepted and ignored)."""
        loss.backward()

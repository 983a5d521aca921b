"""The TRL seam: every private member of TRL (and of the transformers ``Trainer`` under it) that
the trainer relies on, with why, and the TRL versions that have them.

``AgentGRPOTrainer`` subclasses TRL's ``GRPOTrainer`` and replaces its single-turn generation with
multi-turn rollouts. TRL does not promise these members across releases: they are what a TRL
upgrade must be checked against. :func:`moved_members` lists the ones the installed TRL no longer
has; the trainer calls :func:`check_trl_seam` when it is built, so a moved member fails at once
with its name and this module's reason, not as an ``AttributeError`` deep inside a training step.
``tests/trainers/test_trl_seam.py`` checks that the installed TRL has them all, and that this list
names every private TRL member the trainer modules use (a new one must be added here, with why).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import warnings
from dataclasses import dataclass
from typing import Literal

SUPPORTED_TRL = ">=1.16,<1.17"
"""The TRL versions the trainer is tested against (``pyproject.toml`` pins the same range)."""


@dataclass(frozen=True)
class SeamMember:
    """One private member of TRL's ``GRPOTrainer`` (or transformers' ``Trainer``) the trainer uses."""

    name: str
    kind: Literal["method", "attribute"]
    """``method``: overridden (and usually called through ``super()``); ``attribute``: read or written."""
    why: str


@dataclass(frozen=True)
class SeamImport:
    """One helper imported from a TRL module that is not part of ``trl``'s top-level API."""

    module: str
    name: str
    why: str


OVERRIDDEN_METHODS: tuple[SeamMember, ...] = (
    SeamMember("_generate_and_score_completions", "method",
               "the heart of the seam: replaced by the four phases (rollout, score, loss inputs, log) that play "
               "multi-turn episodes and return TRL's loss inputs with per-token advantages"),
    SeamMember("_prepare_inputs", "method",
               "wrapped to plan verl-style updates (rows_per_update) when a new generation batch is buffered, "
               "and timed by the step profile"),
    SeamMember("_compute_loss", "method",
               "wrapped to scale out padding rows and add the verl KL/entropy terms and the plug-in's auxiliary loss"),
    SeamMember("_get_per_token_logps_and_entropies", "method",
               "called for rollout, teacher and reference log-probs, and wrapped to capture the loss pass's "
               "log-probs and entropies for the trainer's own loss terms"),
    SeamMember("_set_signature_columns_if_needed", "method",
               "keeps the dataset's task_id and env_seed columns, which TRL's column pruning would drop"),
)
"""Private methods the trainer overrides."""

PRIVATE_ATTRIBUTES: tuple[SeamMember, ...] = (
    SeamMember("_metrics", "attribute", "TRL's per-mode metric lists: episode, credit and update metrics are appended "
               "there, and averaged over processes before logging"),
    SeamMember("_logs", "attribute", "TRL's completion log (prompts, completions, rewards) filled with the episodes' "
               "turns so log_completions shows them"),
    SeamMember("_buffered_inputs", "attribute", "the generation batch TRL buffers for steps_per_generation "
               "micro-batches: a new one starts the verl update plan"),
    SeamMember("_last_loaded_step", "attribute", "the step whose weights vLLM holds: weights are pushed once per step"),
    SeamMember("_dist", "attribute", "TRL's distributed helper: FSDP1 summon_full_params for generation and the "
               "world-model lockstep check"),
    SeamMember("_entropy_bonus_enabled", "attribute", "switched off when the trainer takes over TRL's entropy bonus "
               "(verl's token-mean entropy term)"),
    SeamMember("_signature_columns", "attribute", "transformers' kept dataset columns, set by the override above"),
)
"""Private attributes of TRL's trainer the trainer reads or writes."""

INTERNAL_IMPORTS: tuple[SeamImport, ...] = (
    SeamImport("trl.models", "unwrap_model_for_generation",
               "unwraps (and under ZeRO-3 gathers) the policy for transformers generation, as TRL does"),
    SeamImport("trl.trainer.utils", "use_adapter",
               "the reference pass and the fixed teacher of a PEFT policy run on its base weights (or its 'ref' adapter)"),
    SeamImport("trl.models", "prepare_deepspeed", "the fixed teacher is prepared as TRL prepares its reference model"),
    SeamImport("trl.models", "prepare_fsdp", "the fixed teacher is prepared as TRL prepares its reference model"),
    SeamImport("trl.trainer.utils", "add_fused_lm_head", "the fixed teacher is built as TRL builds its reference model"),
    SeamImport("trl.trainer.utils", "create_model_from_path", "the fixed teacher is loaded as TRL loads its reference model"),
    SeamImport("trl.trainer.utils", "get_config_model_id", "the fixed teacher is loaded as TRL loads its reference model"),
    SeamImport("trl.models.utils", "disable_gradient_checkpointing",
               "CPU runs turn gradient checkpointing off for a pass that fits, as TRL's own context does (cpu_speed)"),
    SeamImport("trl.experimental.async_grpo.async_grpo_trainer", "save_lora_adapter",
               "async_lora_server saves each policy version's adapter as TRL's AsyncGRPOTrainer does"),
    SeamImport("trl.experimental.async_grpo.async_grpo_trainer", "select_adapter_sync",
               "async_lora_server checks the server's --enable-lora, --max-loras and --max-lora-rank as TRL does"),
    SeamImport("trl.experimental.async_grpo.async_grpo_trainer", "round_lora_rank",
               "async_lora_server names the --max-lora-rank a server needs for the adapter"),
    SeamImport("trl.experimental.async_grpo.async_grpo_trainer", "validate_lora_for_vllm_sync",
               "async_lora_server refuses adapters vLLM cannot serve, as TRL does"),
    SeamImport("trl.experimental.async_grpo.vllm_client", "VLLMClient",
               "async_lora_server loads and unloads adapter versions through TRL's vLLM server client"),
)
"""Helpers imported from TRL's internal modules."""

SEAM: tuple[SeamMember, ...] = OVERRIDDEN_METHODS + PRIVATE_ATTRIBUTES
"""Every private member of TRL's trainer the trainer relies on."""


def _trainer_class() -> type:
    from trl import GRPOTrainer

    return GRPOTrainer


@functools.cache
def _assigned_attributes(cls: type) -> frozenset[str]:
    """Attribute names ``self.<name> = ...`` assigns in the source of ``cls`` and its bases."""
    names: set[str] = set()
    for base in inspect.getmro(cls):
        if base is object:
            continue
        try:
            source = inspect.getsource(base)
        except (OSError, TypeError):  # no source shipped: such attributes cannot be checked here
            continue
        names.update(re.findall(r"self\.(_\w+)\s*(?::[^=\n]+)?=(?!=)", source))
    return frozenset(names)


def moved_members(trainer_cls: type | None = None) -> list[str]:
    """What the installed TRL lacks of the seam, one line each (member, kind and why); empty when all
    is there. Methods must be callables on ``trainer_cls`` (TRL's ``GRPOTrainer`` by default),
    attributes must be assigned in its source (or its bases'), imports must import."""
    cls = trainer_cls or _trainer_class()
    assigned = _assigned_attributes(cls)
    moved = [f"{m.name} (overridden method: {m.why})" for m in OVERRIDDEN_METHODS if not callable(getattr(cls, m.name, None))]
    moved += [f"{m.name} (attribute: {m.why})" for m in PRIVATE_ATTRIBUTES if m.name not in assigned]
    for item in INTERNAL_IMPORTS:
        try:
            with warnings.catch_warnings():  # trl.experimental announces itself on import
                warnings.simplefilter("ignore")
                found = hasattr(importlib.import_module(item.module), item.name)
        except ImportError:
            found = False
        if not found:
            moved.append(f"{item.module}.{item.name} (import: {item.why})")
    return moved


@functools.cache
def check_trl_seam() -> None:
    """Raise ``RuntimeError`` naming every seam member the installed TRL moved (checked once per process)."""
    moved = moved_members()
    if moved:
        import trl

        raise RuntimeError(
            f"the installed TRL {trl.__version__} lacks what the trainer overrides or uses (supported: trl{SUPPORTED_TRL}; "
            f"see agentgym_suite/trainers/trl_seam.py): " + "; ".join(moved)
            + f". Install a supported TRL (pip install 'trl{SUPPORTED_TRL}') or port the trainer to the new names.")

"""The fixed teacher of plug-ins that declare ``needs_fixed_teacher`` (VAD).

VAD compares the teacher with and without the evidence, and the student against both. If the
teacher were the policy being trained, its view without the evidence would move with the
student, and the part of the correction the evidence explains could not be told apart from
the rest. So the teacher is held fixed at the initial weights, taken from the first of:

1. a PEFT policy: its base weights, with the adapter disabled (or TRL's ``ref`` adapter when
   the model has one), as TRL computes its reference log-probs; no extra memory;
2. TRL's reference model (``beta != 0``), unless ``sync_ref_model`` moves it towards the
   policy during training; no extra memory;
3. otherwise (``beta == 0``, TRL's default, or a synced reference model) a frozen copy of the
   initial weights, built as TRL builds its reference model: reloaded from the policy's model
   id with its dtype and attention implementation and, outside DeepSpeed/FSDP, given the
   policy's weights at trainer construction (so a model passed in memory is copied exactly).
   This holds a second copy of the model: the memory of ``beta != 0``.

The copy is built when the trainer is built, before a checkpoint is resumed, so a resumed
run keeps the same teacher.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from accelerate.utils import is_peft_model

logger = logging.getLogger(__name__)

PEFT_BASE = "peft base weights"
REFERENCE = "reference model"
FROZEN_COPY = "frozen copy of the initial weights"


class FixedTeacher:
    """Weights that do not move during training, to run teacher passes on.

    Args:
        kind: where the weights come from (``PEFT_BASE``, ``REFERENCE`` or ``FROZEN_COPY``).
        model: the teacher model; ``None`` for ``PEFT_BASE`` (the policy with its adapter off).
        accelerator: the trainer's accelerator (unwraps a PEFT policy).
    """

    def __init__(self, kind: str, model: Any | None, accelerator: Any) -> None:
        self.kind = kind
        self.model = model
        self.accelerator = accelerator

    @contextmanager
    def weights(self, policy: Any) -> Iterator[Any]:
        """The model to run a teacher pass on (no gradient); ``policy`` is the trainer's model."""
        if self.model is not None:
            yield self.model
            return
        from trl.trainer.utils import use_adapter

        peft = self.accelerator.unwrap_model(policy)
        with use_adapter(peft, adapter_name="ref" if "ref" in peft.peft_config else None):
            yield policy


def build_fixed_teacher(policy: Any, accelerator: Any, *, ref_model: Any | None, ref_model_synced: bool,
                        frozen_copy: Callable[[], Any]) -> FixedTeacher:
    """The fixed teacher (see the module docstring) of a policy after TRL's ``GRPOTrainer.__init__``.

    Args:
        policy: the policy, unwrapped from its accelerate/DDP wrapper.
        accelerator: the trainer's accelerator.
        ref_model: TRL's reference model (None when ``beta == 0``).
        ref_model_synced: ``sync_ref_model``: the reference model moves towards the policy.
        frozen_copy: makes the frozen copy of the initial weights (:func:`frozen_copy`), called
            only when neither a PEFT base nor a fixed reference model can serve.
    """
    if is_peft_model(policy):
        teacher = FixedTeacher(PEFT_BASE, None, accelerator)
    elif ref_model is not None and not ref_model_synced:
        teacher = FixedTeacher(REFERENCE, ref_model, accelerator)
    else:
        teacher = FixedTeacher(FROZEN_COPY, frozen_copy(), accelerator)
    logger.info("the teacher passes run on fixed weights: the %s.", teacher.kind)
    return teacher


def frozen_copy(policy: Any, args: Any, accelerator: Any, *, temperature: float, deepspeed: bool,
                fsdp: bool) -> Any:
    """A copy of ``policy``'s initial weights in eval mode without gradients, patched and placed
    as TRL patches and places its reference model.

    Args:
        policy: the policy, unwrapped.
        args: the trainer's config (TRL's ``model_init_kwargs``, ``trust_remote_code``,
            ``cast_lm_head_to_fp32``, ``distributed_state``).
        accelerator: the trainer's accelerator (places the copy).
        temperature: TRL's sampling temperature (its fused LM head divides the logits by it).
        deepspeed, fsdp: the run is sharded by DeepSpeed / FSDP (the copy is reloaded, not given
            the policy's weights, and prepared as TRL prepares its reference model).
    """
    from trl.models import prepare_deepspeed, prepare_fsdp
    from trl.trainer.utils import add_fused_lm_head, create_model_from_path, get_config_model_id

    kwargs = dict(args.model_init_kwargs or {})
    if args.distributed_state.distributed_type in ("MULTI_GPU", "DEEPSPEED"):
        kwargs["device_map"] = None
    kwargs.setdefault("trust_remote_code", args.trust_remote_code)
    kwargs.setdefault("dtype", policy.dtype)
    kwargs.setdefault("attn_implementation", policy.config._attn_implementation)
    model_id = get_config_model_id(policy.config)
    try:
        frozen = create_model_from_path(model_id, **kwargs)
    except (OSError, ValueError) as err:
        raise ValueError(
            f"the fixed teacher is reloaded from the policy's model id {model_id!r}, as TRL reloads its reference "
            f"model, and that failed ({err}). Save the model with save_pretrained and pass its directory."
        ) from err
    if not (deepspeed or fsdp):
        frozen.load_state_dict(policy.state_dict())
    frozen.eval()
    frozen.requires_grad_(False)
    # TRL's log-prob pass asks every model it scores for the fused LM head it adds to its reference model
    add_fused_lm_head(frozen, temperature=temperature, cast_lm_head_to_fp32=args.cast_lm_head_to_fp32)
    if deepspeed:
        return prepare_deepspeed(frozen, accelerator)
    if fsdp:
        return prepare_fsdp(frozen, accelerator)
    return accelerator.prepare_model(frozen, evaluation_mode=True)

"""Which runs asynchronous rollouts can serve, and why the others are refused.

Credit plug-ins are judged by their declarations, never by name (:func:`async_refusal`):

* A plug-in whose advantages come from returns (GRPO, Dr.GRPO, GiGPO, SkillRise, EnvACE's caller
  rows) trains under async: its group baselines compare the G rollouts of one dispatch, all
  started under one policy version.
* A plug-in that reads old and teacher log-probs for its advantages (AgentOPSD, RLSD) trains too:
  the trainer computes both on the learner's weights when it scores the batch, so the
  teacher-student gap is taken between two prompts under one version, as in a synchronous run;
  the sampling gap between that version and the generator's is what the truncated importance
  weight corrects.
* A plug-in with an auxiliary loss (``has_aux_loss``: SDAR, OPSD, Skill-SD, VAD) is refused: its
  loss is a distillation term over the sampled tokens that TRL's loss adds *without* the
  importance weight the policy term gets, so stale samples would bias it uncorrected. A plug-in
  whose auxiliary loss is valid on off-policy samples says so by declaring
  ``async_rollouts_refusal = None``; any plug-in may declare its own refusal text there.

Runs that are refused whatever the plug-in (:func:`check_async_setup`): DeepSpeed or FSDP (the
policy is copied whole for the generator), several processes (the
rollout thread and the queue live in one process; groups would not be formed across processes),
TRL's ``use_vllm`` generation (async reaches a vLLM server through ``async_lora_server``
instead), and an env that borrows the policy being trained (a
rehearsal env's ``world_model: policy``): its world model generates inside env steps, where the
rollout thread cannot tag the version or keep the sampling log-probs of the simulator's tokens.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.registration import env_class

_UNSET = object()


def async_refusal(plugin: Any) -> str | None:
    """Why the credit plug-in (class or instance) cannot train with ``async_rollouts``, or None when it can."""
    cls = plugin if isinstance(plugin, type) else type(plugin)
    declared = getattr(cls, "async_rollouts_refusal", _UNSET)
    if declared is not _UNSET:
        return None if declared is None else str(declared)
    if getattr(cls, "has_aux_loss", False):
        return (f"credit={cls.name} adds an auxiliary (distillation) loss over the sampled tokens, which TRL's loss "
                "adds without the importance weight that corrects stale samples, so asynchronous samples would bias "
                "it uncorrected; train it with async_rollouts: false (or declare async_rollouts_refusal = None on a "
                "plug-in whose auxiliary loss is valid off-policy).")
    return None


def borrows_policy(env_id: str, env_kwargs: dict[str, Any]) -> str | None:
    """The env setting through which ``env_id`` borrows the policy being trained, or None."""
    try:
        cls = env_class(env_id)
    except Exception:  # noqa: BLE001 - an env given by factory only: the rollout thread checks the made envs
        return None
    borrows = getattr(cls, "borrows_policy", None)
    if callable(borrows) and borrows(dict(env_kwargs or {})):
        return str(getattr(cls, "policy_setting", "") or "its policy setting")
    return None


def env_refusal(setting: str, env_id: str) -> str:
    """The refusal for an env that borrows the policy through ``setting``."""
    return (f"async_rollouts cannot serve {env_id} with {setting}: policy: the policy being trained plays the world "
            "model inside env steps, where the rollout thread can neither tag those generations with a policy "
            "version nor keep their sampling log-probs for the correction. Give the env a model of its own "
            f"({setting}: <backend spec>) or set async_rollouts: false.")


def check_async_setup(args: Any, credit: Any, world_size: int) -> None:
    """Raise ``ValueError`` with the reason when this run cannot use ``async_rollouts``."""
    refusal = async_refusal(credit)
    if refusal is not None:
        raise ValueError(f"async_rollouts is not available: {refusal}")
    if world_size > 1:
        raise ValueError(f"async_rollouts runs in one process for now (this run has {world_size}): the rollout "
                         "thread, its queue and the policy versions are per process, so groups would not be formed "
                         "across processes. Launch one process, or set async_rollouts: false for a multi-process run.")
    if getattr(args, "deepspeed", None) or getattr(args, "fsdp", None):
        raise ValueError("async_rollouts copies the whole policy for the rollout thread from the training process, "
                         "which DeepSpeed and FSDP shard; train without them (async_rollouts is the one-process path), "
                         "or set async_rollouts: false.")
    setting = borrows_policy(args.train_env_id, dict(args.env_kwargs or {}))
    if setting is not None:
        raise ValueError(env_refusal(setting, args.train_env_id))

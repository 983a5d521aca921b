"""The settings of asynchronous rollouts and the checks that need only the config.

``async_rollouts: true`` switches them on; ``max_staleness`` (policy versions) bounds how old a
trained sample may be; ``async_episode_update`` says what an episode that spans a weight update
does; ``async_correction`` and ``async_is_cap`` how the samples within the bound are corrected
(see :mod:`~agentgym_suite.trainers.async_rollouts.staleness`); ``async_rollout_threads`` how many
rollout threads play; ``async_lora_server`` (a URL) makes them generate through an
OpenAI-compatible vLLM server that the learner publishes each policy version to as a LoRA
adapter (see :mod:`~agentgym_suite.trainers.async_rollouts.lora_server`).
"""

from __future__ import annotations

import math
from typing import Any

EPISODE_UPDATES = ("finish", "continue")
"""``finish``: an episode is played to its end on the weights it started with (the generator
takes new weights between rollouts only); ``continue``: the generator takes new weights at the
next turn boundary, so the rest of the episode is played by the newer policy (partial rollouts)."""

CORRECTIONS = ("behaviour_clip", "tis")
"""``behaviour_clip`` (the default): TRL ``AsyncGRPOTrainer``'s PPO clip against the generator's
log-probs, capped by TRL's ``delta``; ``tis``: verl's decoupled truncated importance sampling."""

DEFAULT_MAX_STALENESS = 1
"""Policy versions a trained sample may lag the learner by (the peers use 1-4; TRL's
``AsyncGRPOConfig`` 4)."""

DEFAULT_IS_CAP = 2.0
"""Truncation ``C`` of the importance weight ``min(pi_learner / pi_generator, C)`` (verl's
``rollout_is_threshold`` default)."""

LOSS_TYPES_NOT_LINEAR_IN_ADVANTAGE = ("vespo",)
"""TRL loss types whose per-token loss is not linear in the advantage. Every other loss type's is,
so a non-negative, detached importance weight multiplied into the advantage weights the per-token
loss exactly as TRL's own vLLM correction does (TRL applies that one only with ``use_vllm``)."""


def check_async_settings(config: Any) -> None:
    """Reject async settings that cannot work, with a message that says what to change.

    Called by ``AgentGRPOConfig.__post_init__``; checks that need the trainer (the credit plug-in,
    the env, the number of processes) are in :func:`~agentgym_suite.trainers.async_rollouts.compat.check_async_setup`.
    """
    if config.max_staleness < 0:
        raise ValueError(f"max_staleness must be >= 0 (got {config.max_staleness}); it counts policy versions a "
                         "trained sample may lag the learner by (0: only samples of the current policy).")
    if config.async_episode_update not in EPISODE_UPDATES:
        raise ValueError(f"async_episode_update={config.async_episode_update!r}; choose one of "
                         f"{', '.join(EPISODE_UPDATES)}.")
    if config.async_rollout_threads < 1:
        raise ValueError(f"async_rollout_threads must be >= 1 (got {config.async_rollout_threads}).")
    if config.async_correction not in CORRECTIONS:
        raise ValueError(f"async_correction={config.async_correction!r}; choose one of {', '.join(CORRECTIONS)}.")
    cap = config.async_is_cap
    if cap is None or not math.isfinite(float(cap)) or float(cap) < 1.0:
        raise ValueError(f"async_is_cap must be a finite number >= 1 (got {cap!r}): asynchronous samples are "
                         "corrected with a truncated importance weight min(ratio, async_is_cap), never an "
                         "unclipped one; verl uses 2.0.")
    server = getattr(config, "async_lora_server", None)
    if server is not None and not config.async_rollouts:
        raise ValueError(f"async_lora_server={server!r} is the weight sync of asynchronous rollouts; set "
                         "async_rollouts: true too, or leave async_lora_server unset.")
    if not config.async_rollouts:
        return
    if server is not None:
        check_lora_server_settings(config)
    if config.loss_type in LOSS_TYPES_NOT_LINEAR_IN_ADVANTAGE:
        raise ValueError(f"async_rollouts corrects stale samples with an importance weight folded into the advantage, "
                         f"which loss_type={config.loss_type!r} does not take linearly; use another loss_type (e.g. "
                         "dapo), or async_rollouts: false.")
    if config.async_correction == "behaviour_clip":
        if config.delta is None:
            config.delta = float(cap)  # TRL's two-sided clip: the ratio to the generator never exceeds the cap
        elif not math.isfinite(float(config.delta)):
            raise ValueError(f"async_correction=behaviour_clip caps the ratio with TRL's delta, which must be finite "
                             f"(got {config.delta!r}); leave it unset to use async_is_cap.")
    if config.use_vllm:
        raise ValueError("async_rollouts runs the rollouts in threads of the training process, on the transformers "
                         "backend or, with async_lora_server: URL, on a vLLM server that loads each policy version as "
                         "a LoRA adapter; TRL's own use_vllm generation is the synchronous path. Set use_vllm: false "
                         "(and async_lora_server for a vLLM server), or use TRL's AsyncGRPOTrainer "
                         "(trl.experimental.async_grpo).")


def check_lora_server_settings(config: Any) -> None:
    """Reject an ``async_lora_server`` setting that cannot work: a URL that is not http(s), or a policy
    that is not a LoRA adapter (the server receives each version as an adapter, never full weights)."""
    server = str(config.async_lora_server)
    if not server.startswith(("http://", "https://")):
        raise ValueError(f"async_lora_server={server!r} must be the server's base URL, e.g. http://127.0.0.1:8000 "
                         "(without /v1).")
    if int(getattr(config, "lora_r", 0) or 0) < 1:
        raise ValueError("async_lora_server publishes every policy version to the server as a LoRA adapter, but "
                         "lora_r is 0 (full fine-tuning): set lora_r (e.g. 8), or leave async_lora_server unset to "
                         "generate in process on a copy of the full weights.")

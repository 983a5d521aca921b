"""The settings of asynchronous rollouts and the checks that need only the config.

``async_rollouts: true`` switches them on; ``max_staleness`` (policy versions) bounds how old a
trained sample may be; ``async_episode_update`` says what an episode that spans a weight update
does; ``async_correction`` and ``async_is_cap`` how the samples within the bound are corrected
(see :mod:`~agentgym_suite.trainers.async_rollouts.staleness`); ``async_rollout_threads`` how many
rollout threads play.
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

DEFAULT_MAX_STALENESS = 2
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
    if not config.async_rollouts:
        return
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
        raise ValueError("async_rollouts runs the rollouts on the transformers backend in a thread of the training "
                         "process (the CPU path); with vLLM use TRL's AsyncGRPOTrainer "
                         "(trl.experimental.async_grpo), or set use_vllm: false.")

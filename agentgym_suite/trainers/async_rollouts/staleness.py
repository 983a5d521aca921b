"""How old an asynchronous sample is, which samples are dropped, and how the rest are corrected.

* A group's staleness is the learner's policy version minus the version of its *oldest* turn
  (:func:`group_staleness`): a group of G rollouts is dispatched under one version, and with
  ``async_episode_update: continue`` its later turns may come from newer versions.
* A group older than ``max_staleness`` is dropped whole (:func:`split_fresh`), so every baseline
  still compares the G rollouts of one dispatch; dropped groups are counted.
* The groups within the bound are corrected (``async_correction``). ``behaviour_clip`` (the
  default, TRL ``AsyncGRPOTrainer``'s) needs nothing here: PPO's ratio is taken to the generator's
  log-probs and TRL's ``delta`` caps it. ``tis`` is **token-level truncated importance sampling**
  (:func:`truncated_is_weights`): each trained token's policy-loss term is weighted by
  ``w = min(pi_learner(token) / pi_generator(token), C)``, where ``pi_learner`` is the learner's
  log-prob when the batch is scored (the "old"/proximal policy PPO clips against, as in verl's
  decoupled async setup) and ``pi_generator`` the log-prob the generator sampled the token with.
  That is verl's ``rollout_is`` in ``token``/``truncate`` mode (threshold 2.0) and TRL's
  ``vllm_importance_sampling_mode: token_truncate``; the weight is computed by the suite's port of
  TRL's function (:func:`~agentgym_suite.trainers.vllm_rollout.importance_sampling`). ``C`` must
  be finite: an unclipped ratio is never used.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

import torch
from torch import Tensor

from agentgym_suite.rollout.records import Trajectory
from agentgym_suite.trainers.vllm_rollout import importance_sampling


def group_staleness(learner_version: int, group_version: int) -> int:
    """Learner version minus the group's version (the version its G episodes started under, which
    is also its oldest turn's: later turns are never older)."""
    return int(learner_version) - int(group_version)


def turn_staleness(learner_version: int, trajectories: Iterable[Trajectory]) -> list[int]:
    """Staleness of every turn (learner version minus the turn's version)."""
    return [int(learner_version) - int(t.policy_version) for e in trajectories for t in e.turns
            if t.policy_version is not None]


def staleness_histogram(staleness: Sequence[int], max_staleness: int) -> dict[str, float]:
    """Share of the trained turns at each staleness 0..max_staleness, as ``async/staleness_hist/<k>``
    metrics, with the mean and the maximum."""
    counts = Counter(staleness)
    total = max(1, len(staleness))
    out = {f"async/staleness_hist/{k}": counts.get(k, 0) / total for k in range(max_staleness + 1)}
    out["async/staleness_mean"] = sum(staleness) / total if staleness else 0.0
    out["async/staleness_max"] = float(max(staleness)) if staleness else 0.0
    return out


def truncated_is_weights(learner_logps: Tensor, generator_logps: Tensor, mask: Tensor, cap: float
                         ) -> tuple[Tensor, dict[str, float]]:
    """Per-token TIS weights ``min(exp(learner - generator), cap)`` on the masked-in tokens (0 off
    them), and their statistics: ``async/is_ratio_raw_max`` (before truncation),
    ``async/is_weight_max``/``_mean``, ``async/is_truncated_share``.

    Raises ``ValueError`` for a cap that is not a finite number >= 1: the ratio is never used unclipped.
    """
    if cap is None or not math.isfinite(float(cap)) or float(cap) < 1.0:
        raise ValueError(f"the importance weight needs a finite truncation cap >= 1; got {cap!r}.")
    mask = mask.to(learner_logps.dtype)
    weights, _ = importance_sampling(learner_logps, generator_logps, mask, mode="token_truncate", clip_min=None,
                                     clip_max=float(cap))
    weights = weights * mask
    keep = mask.bool()
    raw = torch.exp(torch.nan_to_num((learner_logps - generator_logps), nan=0.0))[keep]
    applied = weights[keep]
    stats = {
        "async/is_ratio_raw_max": float(raw.max()) if raw.numel() else 0.0,
        "async/is_weight_max": float(applied.max()) if applied.numel() else 0.0,
        "async/is_weight_mean": float(applied.mean()) if applied.numel() else 0.0,
        "async/is_truncated_share": float((raw > cap).float().mean()) if raw.numel() else 0.0,
    }
    return weights, stats


def corrected_advantages(advantages: Tensor, weights: Tensor) -> Tensor:
    """The advantages TRL's loss reads, with the TIS weight folded in: for every loss type but those of
    :data:`~agentgym_suite.trainers.async_rollouts.settings.LOSS_TYPES_NOT_LINEAR_IN_ADVANTAGE` the
    per-token loss is linear in the advantage and the weight is non-negative and detached, so
    ``loss(A * w) = w * loss(A)`` token by token (what TRL's vLLM correction computes)."""
    if (weights < 0).any():
        raise ValueError("importance weights must be non-negative.")
    return advantages * weights.detach().to(advantages.dtype)

"""Group statistics shared by the plug-ins: group-relative normalisation, trajectory-level
baselines, and ordering rows inside trajectories."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Literal

import torch
from torch import Tensor

Singleton = Literal["raw", "zero"]


def key_index(keys: Sequence[Hashable]) -> tuple[Tensor, int]:
    """Map hashable keys to dense ids ``0..n-1`` (first-seen order)."""
    ids: dict[Hashable, int] = {}
    out = [ids.setdefault(k, len(ids)) for k in keys]
    return torch.tensor(out, dtype=torch.long), len(ids)


def group_normalize(
    scores: Tensor,
    keys: Sequence[Hashable],
    *,
    std_normalize: bool,
    eps: float = 1e-6,
    singleton: Singleton = "raw",
) -> Tensor:
    """``(s - mean_g) / (std_g + eps)`` (or ``s - mean_g``) within groups of equal key.

    ``std`` is the unbiased sample std (Bessel), as in verl and TRL. A group of one row has no
    baseline: ``singleton="raw"`` keeps verl's convention (mean 0, std 1, so the row keeps its
    raw score); ``"zero"`` gives it advantage 0.
    """
    scores = scores.to(torch.float32)
    if scores.numel() == 0:
        return scores.clone()
    idx, n = key_index(keys)
    idx = idx.to(scores.device)
    count = torch.zeros(n, device=scores.device).index_add_(0, idx, torch.ones_like(scores))
    total = torch.zeros(n, device=scores.device).index_add_(0, idx, scores)
    mean = total / count
    sq = torch.zeros(n, device=scores.device).index_add_(0, idx, (scores - mean[idx]) ** 2)
    std = torch.sqrt(sq / (count - 1).clamp(min=1.0))
    single = count == 1
    if singleton == "raw":
        mean = torch.where(single, torch.zeros_like(mean), mean)
    std = torch.where(single, torch.ones_like(std), std)
    centred = scores - mean[idx]
    if std_normalize:
        return centred / (std[idx] + eps)
    return centred


def trajectory_mean_baseline(
    scores: Tensor, cell_keys: Sequence[Hashable], traj_ids: Sequence[Hashable]
) -> Tensor:
    """Per-row baseline: mean over trajectories of each trajectory's mean score in the cell.

    Every trajectory counts once in its cell however many rows it has there.
    """
    per_traj: dict[tuple[Hashable, Hashable], list[float]] = defaultdict(list)
    for i, (cell, traj) in enumerate(zip(cell_keys, traj_ids)):
        per_traj[(cell, traj)].append(float(scores[i]))
    per_cell: dict[Hashable, list[float]] = defaultdict(list)
    for (cell, _), vals in per_traj.items():
        per_cell[cell].append(sum(vals) / len(vals))
    base = [sum(per_cell[c]) / len(per_cell[c]) for c in cell_keys]
    return torch.tensor(base, dtype=torch.float32, device=scores.device)


def trajectory_rows(traj_ids: Sequence[Hashable], turn_idx: Sequence[int]) -> dict[Hashable, list[int]]:
    """Row indices of each trajectory, ordered by turn index.

    Raises ``ValueError`` when two rows of one trajectory share a turn index.
    """
    rows: dict[Hashable, list[int]] = defaultdict(list)
    for i, t in enumerate(traj_ids):
        rows[t].append(i)
    for traj, idx in rows.items():
        idx.sort(key=lambda i: int(turn_idx[i]))
        turns = [int(turn_idx[i]) for i in idx]
        if len(set(turns)) != len(turns):
            raise ValueError(
                f"trajectory {traj!r} has repeated turn indices {turns}; give each row of a "
                "trajectory its own turn_idx (0, 1, 2, ...)."
            )
    return dict(rows)


def broadcast(per_row: Tensor, mask: Tensor) -> Tensor:
    """Broadcast ``(R,)`` values over the tokens of ``mask`` ``(R, T)``; 0 on masked-out tokens."""
    values = per_row.to(torch.float32).to(mask.device).unsqueeze(-1).expand(mask.shape)
    return torch.where(mask.bool(), values, torch.zeros_like(values))

"""GiGPO: episode-level group advantage plus a step-level advantage computed inside
anchor-state groups (rows of one group whose raw observation is identical).

Both levels are normalised the same way, chosen by ``normalization`` (verl-agent's
``algorithm.gigpo.mode``, ``compute_gigpo_outcome_advantage``): ``mean_norm`` subtracts the
group mean, ``mean_std_norm`` also divides by the group's std + 1e-6. The released scripts set it
per env: ALFWorld and Search run ``mean_std_norm``, WebShop ``mean_norm``; verl-agent's config
default, and ours, is ``mean_norm``, so a config should set it.

``similarity_threshold`` (verl-agent's ``enable_similarity`` / ``similarity_thresh``, 0.9 in the
Search script) groups anchor states that are alike rather than identical: within a group, rows
are visited in batch order and each joins the first cluster whose first observation has a
``difflib.SequenceMatcher`` ratio of at least the threshold with its own, else opens a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

import torch
from torch import Tensor

from agentgym_suite.trainers.credit.base import (
    CreditAssigner,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    finite,
    require,
)
from agentgym_suite.trainers.credit.grouping import broadcast, group_normalize, trajectory_rows
from agentgym_suite.trainers.credit.grpo import row_scores
from agentgym_suite.trainers.credit.inputs import RowField, RowInput


def _step_rewards(rows: Sequence[Any]) -> Tensor:
    return torch.tensor([float(r.step_reward) for r in rows], dtype=torch.float32)


ANCHOR_KEYS = RowField("anchor_keys", lambda rows: [r.anchor for r in rows],
                       requires="Row.anchor: the row's raw observation, without history (its anchor state)")
"""GiGPO's input: each row's anchor state, in ``CreditBatch.extras["anchor_keys"]``."""
STEP_REWARDS = RowField("step_rewards", _step_rewards, kind="tensor",
                        requires="Row.step_reward: the env's reward for the row's step")
"""GiGPO's input: each row's step reward ``(R,)``, in ``CreditBatch.extras["step_rewards"]``."""


NORMALIZATIONS = ("mean_norm", "mean_std_norm")
"""Values of ``GiGPOCreditConfig.normalization`` (verl-agent's ``algorithm.gigpo.mode``)."""


@dataclass
class GiGPOCreditConfig(CreditConfig):
    """Parameters of GiGPO: ``step_weight``, ``gamma`` and the invalid penalty as in every released
    script; ``normalization`` as verl-agent's default (the scripts set it per env, see above)."""

    step_weight: float = field(default=1.0, metadata={"help": "w in A = A_episode + w * A_step."})
    gamma: float = field(default=0.95, metadata={"help": "Discount of the step return R_t = r_t + gamma*R_{t+1}."})
    normalization: str = field(
        default="mean_norm",
        metadata={"help": "Both levels: 'mean_norm' (A = s - mean; WebShop's script) or 'mean_std_norm' "
                          "(A = (s - mean) / (std + eps); ALFWorld's and Search's scripts)."},
    )
    invalid_penalty: float = field(
        default=0.1, metadata={"help": "Subtracted from both the row score and its step return."}
    )
    eps: float = field(default=1e-6, metadata={"help": "Added to the std before dividing."})
    similarity_threshold: float | None = field(
        default=None,
        metadata={"help": "None: anchor groups of identical observations. A ratio in (0, 1): observations whose "
                          "difflib ratio reaches it share an anchor group (verl-agent's enable_similarity; 0.9 on "
                          "Search)."},
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        threshold = self.similarity_threshold
        require(threshold is None or (finite(threshold) and 0.0 < threshold < 1.0),
                f"similarity_threshold must be null or in (0, 1) (got {threshold!r}); the Search script uses 0.9.")
        require(finite(self.step_weight) and self.step_weight >= 0,
                f"step_weight must be >= 0 (got {self.step_weight!r}); the paper uses 1.0.")
        require(finite(self.gamma) and 0.0 <= self.gamma <= 1.0,
                f"gamma must be in [0, 1] (got {self.gamma!r}); the paper uses 0.95.")
        require(finite(self.invalid_penalty) and self.invalid_penalty >= 0,
                f"invalid_penalty must be >= 0 (got {self.invalid_penalty!r}); use 0.1 or 0 to disable.")
        require(finite(self.eps) and self.eps > 0, f"eps must be > 0 (got {self.eps!r}).")
        require(self.normalization in NORMALIZATIONS,
                f"normalization must be one of {list(NORMALIZATIONS)} (got {self.normalization!r}); the released "
                "scripts use mean_std_norm for ALFWorld and Search, mean_norm for WebShop.")

    @property
    def std_normalize(self) -> bool:
        """True for ``mean_std_norm``."""
        return self.normalization == "mean_std_norm"


def discounted_step_returns(batch: CreditBatch, gamma: float) -> Tensor:
    """``R_t = r_t + gamma * R_{t+1}`` along each trajectory, ``(R,)``.

    Without the ``step_rewards`` input the reward is sparse: the episode return on the trajectory's
    last turn and 0 on the others.
    """
    order = trajectory_rows(batch.traj_ids, batch.turn_idx)
    returns = batch.returns.to(torch.float32)
    given = batch.extras.get(STEP_REWARDS.name)
    if given is not None:
        rewards = torch.as_tensor(given, dtype=torch.float32, device=returns.device)
    else:
        rewards = torch.zeros_like(returns)
        for rows in order.values():
            rewards[rows[-1]] = returns[rows[-1]]
    out = torch.zeros_like(rewards)
    for rows in order.values():
        running = torch.zeros((), dtype=torch.float32, device=rewards.device)
        for i in reversed(rows):
            running = rewards[i] + gamma * running
            out[i] = running
    return out


class GiGPOCredit(CreditAssigner):
    """GiGPO: ``A = A_episode + w * A_step``.

    ``A_episode`` normalises the row scores over all step rows of the group (verl-agent's
    default; a single-row group keeps its raw score). ``A_step`` normalises the discounted
    step returns (minus the row's invalid penalty) within anchor groups = (group, raw
    observation); a singleton anchor group gets ``A_step = 0``.
    """

    name: ClassVar[str] = "gigpo"
    config_cls: ClassVar[type[CreditConfig]] = GiGPOCreditConfig
    row_inputs: ClassVar[tuple[RowInput, ...]] = (ANCHOR_KEYS, STEP_REWARDS)
    config: GiGPOCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Episode plus weighted step advantage, broadcast over each row's model tokens."""
        self.check_batch(batch)
        cfg = self.config
        penalty = cfg.invalid_penalty * batch.invalid.to(torch.float32)
        episode = group_normalize(
            row_scores(batch, cfg.invalid_penalty), batch.group_ids,
            std_normalize=cfg.std_normalize, eps=cfg.eps, singleton="raw",
        )
        step_returns = discounted_step_returns(batch, cfg.gamma) - penalty
        keys: list[Any] = list(batch.extras[ANCHOR_KEYS.name])
        if cfg.similarity_threshold is not None:
            keys = similar_anchor_keys(batch.group_ids, keys, cfg.similarity_threshold)
        anchors = list(zip(batch.group_ids, keys))
        step = group_normalize(
            step_returns, anchors, std_normalize=cfg.std_normalize, eps=cfg.eps, singleton="zero"
        )
        per_row = episode + cfg.step_weight * step
        sizes: dict[object, int] = {}
        for a in anchors:
            sizes[a] = sizes.get(a, 0) + 1
        metrics = {
            self.metric("episode_adv_abs_mean"): float(episode.abs().mean()) if per_row.numel() else 0.0,
            self.metric("step_adv_abs_mean"): float(step.abs().mean()) if per_row.numel() else 0.0,
            self.metric("anchor_group_size_mean"): (sum(sizes.values()) / len(sizes)) if sizes else 0.0,
        }
        return CreditOutput(broadcast(per_row, batch.completion_mask), metrics)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """On one-turn episodes that share their first observation the step groups equal the
        episode groups, so GiGPO is ``(1 + w)`` times Dr. GRPO (GRPO with ``mean_std_norm``)."""
        base = "grpo" if self.config.std_normalize else "dr_grpo"
        return (base, 1.0 + self.config.step_weight)


def similar_anchor_keys(group_ids: Sequence[Hashable], anchor_keys: Sequence[Any], threshold: float) -> list[str]:
    """Each row's anchor key replaced by the first key of its cluster: within a group, in row order,
    a key joins the first cluster whose representative it matches with a difflib ratio >= threshold."""
    clusters: dict[Hashable, list[str]] = {}
    out = []
    for group, key in zip(group_ids, anchor_keys):
        text = str(key)
        reps = clusters.setdefault(group, [])
        rep = next((r for r in reps if r == text or SequenceMatcher(None, text, r).ratio() >= threshold), None)
        if rep is None:
            reps.append(text)
            rep = text
        out.append(rep)
    return out

"""AgentOPSD: recursive belief credit. The teacher's evidence updates a belief that the
episode succeeds; turns (or tokens) that move the belief most get their GRPO advantage
scaled up, the others down, by at most ``lambda * band`` (sign never flips)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import torch
from torch import Tensor

from agentgym_suite.trainers.credit.base import (
    CreditBatch,
    CreditConfig,
    CreditOutput,
    finite,
    masked_mean,
    require,
    TeacherContext,
    TeacherSettings,
    where_mask,
)
from agentgym_suite.trainers.credit.grouping import broadcast, trajectory_rows
from agentgym_suite.trainers.credit.grpo import GRPOCredit, GRPOCreditConfig, grpo_row_advantages, row_scores
from agentgym_suite.trainers.credit.self_distillation import PrivilegedTextTeacher

PRIOR_CLAMP = 1e-4
BELIEF_CLAMP = 1e-6


@dataclass
class AgentOPSDCreditConfig(GRPOCreditConfig):
    """Parameters of AgentOPSD on top of the verl-agent GRPO advantage."""

    granularity: str = field(
        default="turn",
        metadata={"help": "'turn' (ALFWorld): one multiplier per turn; 'token' (WebShop, Search): per token."},
    )
    lambda_: float = field(default=0.5, metadata={"help": "Mix: A * ((1 - lambda) + lambda * m)."})
    band: float = field(default=0.2, metadata={"help": "b: m = clip(1 + b*sign(A)*z, 1-b, 1+b)."})
    normalize_prior: bool = field(
        default=False,
        metadata={
            "help": "Divide returns by max_return before forming the prior V_0. False (original): "
            "raw returns, so V_0 saturates at 1-1e-4 whenever a group with 0/10 returns has a success."
        },
    )
    max_return: float | None = field(
        default=None, metadata={"help": "Env's maximum return (10 for ALFWorld); needed with normalize_prior."}
    )
    z_eps: float = field(
        default=1e-6,
        metadata={"help": "eps of the z-score: std + eps (turn), sqrt(var + eps) + eps (token), as the original."},
    )

    def __post_init__(self) -> None:
        """Validate the parameters."""
        super().__post_init__()
        require(self.granularity in ("turn", "token"),
                f"granularity must be 'turn' or 'token' (got {self.granularity!r}).")
        require(finite(self.lambda_) and 0.0 <= self.lambda_ <= 1.0,
                f"lambda_ must be in [0, 1] (got {self.lambda_!r}); the paper uses 0.5.")
        require(finite(self.band) and 0.0 <= self.band < 1.0,
                f"band must be in [0, 1) so the multiplier stays positive (got {self.band!r}); the paper uses 0.2.")
        require(finite(self.z_eps) and self.z_eps > 0, f"z_eps must be > 0 (got {self.z_eps!r}).")
        if self.normalize_prior:
            require(self.max_return is not None and finite(self.max_return) and self.max_return > 0,
                    "normalize_prior=True needs max_return > 0 (e.g. max_return=10 for ALFWorld).")


def belief_revisions(evidence: Tensor, prior: float) -> Tensor:
    """``Delta B_k = B_k - B_{k-1}`` for ``logit B_k = logit V_0 + sum_{j<=k} e_j`` (``B_0 = V_0``)."""
    prior_t = torch.tensor(prior, dtype=torch.float64)
    logit_b = torch.logit(prior_t) + torch.cumsum(evidence.to(torch.float64), dim=0)
    belief = torch.sigmoid(logit_b).clamp(BELIEF_CLAMP, 1.0 - BELIEF_CLAMP)
    previous = torch.cat([prior_t.reshape(1), belief[:-1]])
    return (belief - previous).to(torch.float32)


def multipliers(revisions: Tensor, adv_sign: Tensor, band: float, z_eps: float, *, token: bool = False) -> Tensor:
    """``m = clip(1 + b * sign(A) * z, 1 - b, 1 + b)`` with ``z`` the z-score of the revisions
    (population variance ``var``).

    The denominator is the original's for each granularity: ``std + eps`` over the turns of a
    trajectory (``compute_opsd_turn_advantage``), ``sqrt(var + eps) + eps`` over the tokens of a
    row (``compute_opsd_token_advantage``). The latter keeps ``z`` small when the revisions are
    all tiny (a saturated prior), so the factors stay near 1.
    """
    if revisions.numel() == 0:
        return revisions
    centred = revisions - revisions.mean()
    var = (centred**2).mean()
    scale = torch.sqrt(var + z_eps) + z_eps if token else torch.sqrt(var) + z_eps
    return (1.0 + band * adv_sign * centred / scale).clamp(1.0 - band, 1.0 + band)


class AgentOPSDCredit(GRPOCredit):
    """AgentOPSD: GRPO row advantages rescaled by belief-revision multipliers.

    ``turn`` granularity: evidence of turn k = sum over its tokens of (teacher - old) log-prob;
    the recursion runs over the turns of a trajectory. ``token`` granularity: the same
    recursion over the tokens of each row, restarting from ``V_0`` at every row.
    """

    name: ClassVar[str] = "agentopsd"
    config_cls: ClassVar[type[CreditConfig]] = AgentOPSDCreditConfig
    needs_old_logprobs: ClassVar[bool] = True
    needs_teacher_logprobs: ClassVar[bool] = True
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = PrivilegedTextTeacher
    config: AgentOPSDCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """GRPO advantages times ``(1 - lambda) + lambda * m`` per turn or token."""
        self.check_batch(batch)
        cfg = self.config
        assert batch.teacher_logprobs is not None and batch.old_logprobs is not None
        mask = batch.completion_mask.bool()
        per_row = grpo_row_advantages(batch, cfg)
        token_evidence = where_mask(
            batch.teacher_logprobs.to(torch.float32) - batch.old_logprobs.to(torch.float32), mask
        )
        order = trajectory_rows(batch.traj_ids, batch.turn_idx)
        priors = self._priors(batch, order)
        factor = torch.ones_like(token_evidence)
        for rows in order.values():
            prior = priors[batch.group_ids[rows[0]]]
            if cfg.granularity == "turn":
                evidence = token_evidence[rows].sum(dim=1)
                m = multipliers(belief_revisions(evidence, prior), torch.sign(per_row[rows]), cfg.band, cfg.z_eps)
                factor[rows] = ((1.0 - cfg.lambda_) + cfg.lambda_ * m).unsqueeze(-1).to(factor.dtype)
            else:
                for i in rows:
                    tokens = mask[i].nonzero(as_tuple=True)[0]
                    if tokens.numel() == 0:
                        continue
                    rev = belief_revisions(token_evidence[i, tokens], prior)
                    m = multipliers(rev, torch.sign(per_row[i]).expand_as(rev), cfg.band, cfg.z_eps, token=True)
                    factor[i, tokens] = ((1.0 - cfg.lambda_) + cfg.lambda_ * m).to(factor.dtype)
        adv = where_mask(broadcast(per_row, mask) * factor, mask)
        metrics = {
            self.metric("multiplier_mean"): float(masked_mean(factor, mask)),
            self.metric("multiplier_min"): float(factor[mask].min()) if mask.any() else 1.0,
            self.metric("multiplier_max"): float(factor[mask].max()) if mask.any() else 1.0,
            self.metric("prior_mean"): (sum(priors.values()) / len(priors)) if priors else 0.0,
            self.metric("evidence_mean"): float(masked_mean(token_evidence, mask)),
        }
        return CreditOutput(adv, metrics)

    def _priors(self, batch: CreditBatch, order: dict[object, list[int]]) -> dict[object, float]:
        """``V_0`` per group: the mean over its trajectories of each one's score after the invalid
        penalty (optionally / max_return), clamped. As the original ``compute_group_mean_v0``,
        which dedups a trajectory's rows by keeping its first (turn 0) row, a trajectory's score is
        that of its first row: ``return - c * invalid``."""
        scores = row_scores(batch, self.config.invalid_penalty)
        sums: dict[object, list[float]] = {}
        for rows in order.values():
            sums.setdefault(batch.group_ids[rows[0]], []).append(float(scores[rows[0]]))
        scale = float(self.config.max_return) if self.config.normalize_prior else 1.0  # type: ignore[arg-type]
        return {
            g: min(max(sum(v) / len(v) / scale, PRIOR_CLAMP), 1.0 - PRIOR_CLAMP) for g, v in sums.items()
        }

    def one_turn_equivalent(self) -> tuple[str, float]:
        """With an uninformative teacher every revision is 0, so every multiplier is 1."""
        return ("grpo", 1.0)

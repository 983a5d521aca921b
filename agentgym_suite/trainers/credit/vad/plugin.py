"""VAD (text form): attributable distillation. The teacher is run with the privileged
evidence in context (``x+``) and with it ablated (``x-``); only the part of the teacher's
correction that is explained by the evidence is distilled into the student.

No VAD code is public: everything below is reconstructed from the paper's abstract, the choices
it leaves open are listed under "Choices" and the training recipe around it is verl-agent's GRPO
ALFWorld script (``configs/recipes/vad.yaml``).

Teacher and counterfactual (what the trainer computes for this plug-in):

- ``x+`` is the privileged prompt: header, evidence (the trainer's ``teacher_context`` text),
  then the student's prompt. ``x-`` is the same token sequence with the evidence tokens
  replaced (``counterfactual``): ``blank`` puts one blank token in place of each (a space
  where the tokenizer has it as one token, see :data:`~.evidence.BLANK_TEXTS`); ``unrelated``
  puts the evidence of the next row of another task in the batch, repeated or cut to the same
  number of tokens, or, when the batch holds no other task, a fixed neutral passage of that
  length (:data:`~.evidence.NEUTRAL_PASSAGE`). Header, student prompt and
  token positions are unchanged, so ``x+`` and ``x-`` differ in the evidence alone. ``x-`` is
  never the student's own prompt: with the student's prompt under the student's weights,
  ``log p_S = log p_T(.|x-)``, so ``r = u``, ``alpha = 1`` and VAD is plain privileged
  distillation.
- The teacher is fixed (``needs_fixed_teacher``): TRL's reference model, a PEFT policy's base
  weights, or a frozen copy of the initial weights the trainer builds when there is neither
  (``beta == 0``); see ``trainers.fixed_teacher``. Both ``x+`` and ``x-`` run on it.

Per generated token ``t`` (all vectors over the vocabulary, or over a subset of it):

- centred teacher log-probs ``c± = log p_T(.|x±) - mean_v log p_T(v|x±)``, ``u = c+ - c-``;
- correction ``r = centre(log p_T(.|x+) - log p_S)``; projection ``alpha = <r, u> / |u|^2``
  (``alpha = 0`` when ``|u|^2 <= eps``; ``one_sided`` clips ``alpha >= 0``);
- target ``q = softmax(log p_S + alpha * u)``, detached;
- loss ``JSD(p_S || q) + lambda_reg * w * JSD(p_S || p_T+)``, token-mean, times ``coef``.

Choices for the parts the paper leaves open:

- **weight** ``w = 1 - share`` with ``share = |alpha u| / |r|`` (in [0, 1] by Cauchy-Schwarz):
  the less of the correction the evidence explains, the more the plain teacher term pulls;
  when the evidence changes nothing (``u = 0``) the loss is ``lambda_reg * JSD(p_S || p_T+)``.
- **JSD** is the symmetric one with mixture ``m = (p + q) / 2``.
- **vocabulary**: full by default. ``top_k`` keeps the ``k`` most likely tokens under the
  teacher with evidence and renormalises all three distributions on that subset; a trainer
  that stores only top-k teacher logits passes their ids in ``CreditBatch.aux_extras["vocab_index"]`` and the
  student's logits are gathered at those ids (same renormalisation).
- ``w`` and ``q`` carry no gradient; the student's log-probs do.
- **counterfactual** ``blank`` by default: it removes the evidence and adds nothing, where an
  unrelated passage could itself shift the teacher.

Logged per micro-batch (token means): ``alpha_mean``, ``share_mean``, ``reg_weight_mean``
(``w``, before ``lambda_reg``), ``target_jsd_mean``, ``teacher_jsd_mean``.

Advantages are plain verl-agent GRPO: VAD is a distillation add-on (``primary: reward``, the
default).

**Reconstructed-target variant** (``primary: target``, "VAD-target"): the reconstructed target
``q`` is the primary training signal. The loss above (times ``coef``) is the objective, and the
GRPO policy term is kept only as a secondary one, its advantages scaled by ``reward_coef``
(default 0 in this variant: the update is distillation towards ``q`` alone; 1 in the default
variant). The abstract says the target is reconstructed from the attributable part of the
teacher's correction but not how it is weighed against the environment's reward, so both
readings are offered; the variant's weighting is ours. Every row is trained (the VAD loss enters
each row, whatever its advantage).

What is inferred, not read from code (no VAD code is public): the counterfactual construction,
the centring, the projection and its clipping, the weight ``w``, the JSD form, the top-k
vocabulary, the teacher being the initial weights, and the weighting of target and reward in
both variants (``configs/recipes/vad.yaml`` lists the base recipe they run on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import torch
from torch import Tensor

from agentgym_suite.trainers.credit.base import (
    AuxLossOutput,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    Encode,
    finite,
    masked_mean,
    require,
    TeacherContext,
    TeacherLogitPrompts,
    TeacherSettings,
    VOCAB_INDEX,
)
from agentgym_suite.trainers.credit.grpo import GRPOCredit, GRPOCreditConfig
from agentgym_suite.trainers.credit.vad.evidence import COUNTERFACTUALS, evidence_prompts
from agentgym_suite.trainers.credit.self_distillation import PrivilegedTextTeacher

WITH_EVIDENCE = "teacher_logits"
"""Key in ``CreditBatch.aux_extras`` of the teacher's logits after ``x+`` (the evidence in context)."""
WITHOUT_EVIDENCE = "teacher_logits_no_evidence"
"""Key in ``CreditBatch.aux_extras`` of the teacher's logits after ``x-`` (the evidence ablated)."""

LOG2 = 0.6931471805599453
TRAINER_TOP_K = 64
"""Vocabulary a trainer keeps per token of the stored teacher logits unless ``top_k`` is set
(``None`` = the full vocabulary, memory ``rows x tokens x vocab``)."""


PRIMARY_SIGNALS = ("reward", "target")
"""``reward``: GRPO advantages drive the update, the VAD loss is added; ``target`` (VAD-target): the
reconstructed target drives it, the GRPO term is scaled by ``reward_coef``."""


@dataclass
class VADCreditConfig(GRPOCreditConfig):
    """Parameters of the VAD distillation term."""

    coef: float = field(default=1.0, metadata={"help": "Weight of the VAD loss added to the GRPO loss."})
    lambda_reg: float = field(default=0.1, metadata={"help": "Weight of the direct-teacher JSD regulariser."})
    one_sided: bool = field(default=False, metadata={"help": "Clip the projection alpha at 0."})
    top_k: int | None = field(
        default=None, metadata={"help": "Restrict to the teacher's top-k tokens (None = full vocabulary)."}
    )
    proj_eps: float = field(default=1e-8, metadata={"help": "alpha = 0 when |u|^2 <= proj_eps."})
    counterfactual: str = field(
        default="blank",
        metadata={"help": "How x- ablates the evidence: blank (a blank token per evidence token) or unrelated "
                          "(another task's evidence in the batch, or a fixed neutral passage, of the same length)."},
    )

    primary: str = field(
        default="reward",
        metadata={"help": "Which signal drives the update: reward (GRPO advantages, the VAD loss added with coef) or "
                          "target (VAD-target: the reconstructed target q is the objective, the GRPO term weighted "
                          "by reward_coef)."},
    )
    reward_coef: float | None = field(
        default=None,
        metadata={"help": "Scale of the GRPO advantages; default 1 with primary: reward, 0 with primary: target."},
    )

    def __post_init__(self) -> None:
        """Validate the parameters and resolve ``reward_coef`` from ``primary``."""
        super().__post_init__()
        require(self.primary in PRIMARY_SIGNALS,
                f"primary must be one of {', '.join(PRIMARY_SIGNALS)} (got {self.primary!r}).")
        if self.reward_coef is None:
            self.reward_coef = 1.0 if self.primary == "reward" else 0.0
        require(finite(self.reward_coef) and self.reward_coef >= 0,
                f"reward_coef must be >= 0 (got {self.reward_coef!r}).")
        require(finite(self.coef) and self.coef >= 0, f"coef must be >= 0 (got {self.coef!r}).")
        require(self.primary == "reward" or self.coef > 0,
                "primary: target needs coef > 0 (the reconstructed target is then the only signal besides reward_coef).")
        require(finite(self.lambda_reg) and self.lambda_reg >= 0,
                f"lambda_reg must be >= 0 (got {self.lambda_reg!r}); 0 disables the regulariser.")
        require(self.top_k is None or (isinstance(self.top_k, int) and self.top_k >= 2),
                f"top_k must be None (full vocabulary) or an int >= 2 (got {self.top_k!r}).")
        require(finite(self.proj_eps) and self.proj_eps > 0, f"proj_eps must be > 0 (got {self.proj_eps!r}).")
        require(self.counterfactual in COUNTERFACTUALS,
                f"counterfactual must be one of {', '.join(COUNTERFACTUALS)} (got {self.counterfactual!r}).")


def centre(x: Tensor) -> Tensor:
    """Subtract the mean over the last (vocabulary) axis."""
    return x - x.mean(dim=-1, keepdim=True)


def vad_target(
    student_logp: Tensor, pos_logp: Tensor, neg_logp: Tensor, *, one_sided: bool, eps: float = 1e-8
) -> tuple[Tensor, Tensor, Tensor]:
    """Target log-probs ``log q``, projection ``alpha`` and attributable share, all detached.

    Inputs are normalised log-probs ``(..., V)``; outputs ``(..., V)``, ``(...)``, ``(...)``.
    """
    s = student_logp.detach()
    u = centre(pos_logp) - centre(neg_logp)
    r = centre(pos_logp - s)
    uu = (u * u).sum(-1)
    safe = uu > eps
    alpha = torch.where(safe, (r * u).sum(-1) / torch.where(safe, uu, torch.ones_like(uu)), torch.zeros_like(uu))
    if one_sided:
        alpha = alpha.clamp(min=0.0)
    aligned = alpha.unsqueeze(-1) * u
    q_logp = torch.log_softmax(s + aligned, dim=-1)
    r_norm = r.norm(dim=-1)
    share = torch.where(r_norm > 0, aligned.norm(dim=-1) / r_norm.clamp(min=1e-12), torch.zeros_like(r_norm))
    return q_logp.detach(), alpha.detach(), share.clamp(0.0, 1.0).detach()


def jsd(p_logp: Tensor, q_logp: Tensor) -> Tensor:
    """Jensen-Shannon divergence over the last axis, from log-probs (gradient through both)."""
    m_logp = torch.logsumexp(torch.stack([p_logp, q_logp]), dim=0) - LOG2
    kl_pm = (p_logp.exp() * (p_logp - m_logp)).sum(-1)
    kl_qm = (q_logp.exp() * (q_logp - m_logp)).sum(-1)
    return 0.5 * (kl_pm + kl_qm)


def vad_token_loss(
    student_logits: Tensor, pos_logits: Tensor, neg_logits: Tensor, *, lambda_reg: float,
    one_sided: bool, eps: float = 1e-8,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Per-token VAD loss ``(...)`` from logits over one (sub)vocabulary, plus diagnostics."""
    s = torch.log_softmax(student_logits.float(), dim=-1)
    pos = torch.log_softmax(pos_logits.detach().float(), dim=-1)
    neg = torch.log_softmax(neg_logits.detach().float(), dim=-1)
    q, alpha, share = vad_target(s, pos, neg, one_sided=one_sided, eps=eps)
    weight = 1.0 - share
    target_term = jsd(s, q)
    teacher_term = jsd(s, pos)
    loss = target_term + lambda_reg * weight * teacher_term
    return loss, {"alpha": alpha, "share": share, "reg_weight": weight, "target_jsd": target_term.detach(),
                  "teacher_jsd": teacher_term.detach()}


class VADCredit(GRPOCredit):
    """VAD: GRPO advantages plus ``coef`` times the attributable-distillation loss."""

    name: ClassVar[str] = "vad"
    config_cls: ClassVar[type[CreditConfig]] = VADCreditConfig
    needs_full_logits: ClassVar[bool] = True
    teacher_context: ClassVar[Callable[[TeacherSettings], TeacherContext] | None] = PrivilegedTextTeacher
    needs_fixed_teacher: ClassVar[bool] = True
    extra_fields: ClassVar[tuple[str, ...]] = (WITH_EVIDENCE, WITHOUT_EVIDENCE)
    has_aux_loss: ClassVar[bool] = True
    trainer_defaults: ClassVar[Mapping[str, Any]] = {"top_k": TRAINER_TOP_K}
    config: VADCreditConfig

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """GRPO advantages times ``reward_coef`` (1 by default; 0 in VAD-target, ``primary: target``)."""
        out = super().advantages(batch)
        scale = float(self.config.reward_coef if self.config.reward_coef is not None else 1.0)
        if scale != 1.0:
            out = CreditOutput(out.advantages * scale, {**out.metrics, self.metric("reward_coef"): scale})
        return out

    def one_turn_equivalent(self) -> tuple[str, float]:
        """GRPO scaled by ``reward_coef``."""
        return ("grpo", float(self.config.reward_coef if self.config.reward_coef is not None else 1.0))

    def teacher_logit_prompts(self, rows: Sequence[Any], texts: Sequence[str], encode: Encode,
                              max_prompt_tokens: int) -> TeacherLogitPrompts:
        """``x+`` and ``x-`` of each row (:func:`~.evidence.evidence_prompts` with the config's
        ``counterfactual``; the rows' tasks pick an ``unrelated`` donor), the top-k of the config."""
        pos, neg = evidence_prompts(encode, texts, [r.prompt_ids for r in rows], [r.episode.task_id for r in rows],
                                    counterfactual=self.config.counterfactual, max_prompt_tokens=max_prompt_tokens)
        return TeacherLogitPrompts({WITH_EVIDENCE: pos, WITHOUT_EVIDENCE: neg}, top_k=self.config.top_k)

    def aux_loss(
        self, batch: CreditBatch, logprobs: Tensor, logits: Tensor | None = None
    ) -> AuxLossOutput:
        """Token-mean VAD loss; ``logits`` ``(R, T, V)`` are the student's current logits."""
        self.check_batch(batch)
        if logits is None or logits.dim() != 3 or logits.shape[:2] != batch.completion_mask.shape:
            raise ValueError(
                "vad needs the student's current logits of shape (rows, tokens, vocab) aligned with the "
                f"completion mask {tuple(batch.completion_mask.shape)}; pass logits= to aux_loss."
            )
        mask = batch.completion_mask.to(logits.device).bool()
        pos = batch.aux_extras[WITH_EVIDENCE].to(logits.device)
        neg = batch.aux_extras[WITHOUT_EVIDENCE].to(logits.device)
        student = logits
        index = batch.aux_extras.get(VOCAB_INDEX)
        if index is not None:
            student = logits.gather(-1, index.to(logits.device).long())
        elif self.config.top_k is not None and self.config.top_k < pos.shape[-1]:
            idx = pos.topk(self.config.top_k, dim=-1).indices
            student, pos, neg = student.gather(-1, idx), pos.gather(-1, idx), neg.gather(-1, idx)
        if pos.shape != student.shape or neg.shape != student.shape:
            raise ValueError(
                f"vad: teacher logits {tuple(pos.shape)} / {tuple(neg.shape)} do not match the student's "
                f"{tuple(student.shape)}; give all three on the same vocabulary (or set aux_extras['{VOCAB_INDEX}'])."
            )
        keep = mask.unsqueeze(-1)
        zeros = torch.zeros((), dtype=student.dtype, device=student.device)
        student = torch.where(keep, student, zeros)
        pos = torch.where(keep, pos.to(student.dtype), zeros)
        neg = torch.where(keep, neg.to(student.dtype), zeros)
        per_token, diag = vad_token_loss(
            student, pos, neg, lambda_reg=self.config.lambda_reg, one_sided=self.config.one_sided,
            eps=self.config.proj_eps,
        )
        loss = masked_mean(per_token, mask)
        metrics = {self.metric("loss"): float(loss.detach())}
        for key, value in diag.items():
            metrics[self.metric(f"{key}_mean")] = float(masked_mean(value, mask))
        return AuxLossOutput(self.config.coef * loss, metrics)

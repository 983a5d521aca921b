"""VAD target reconstruction and loss on a 5-token vocabulary: numpy by hand vs the plug-in."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner
from agentgym_suite.trainers.credit.vad import VADCreditConfig, vad_target, vad_token_loss

STUDENT = [1.0, 0.5, -0.5, 0.0, 2.0]
POS = [2.0, 0.0, -1.0, 0.5, 1.0]
NEG = [1.0, 0.2, -1.0, 0.4, 1.5]


def np_logsoftmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x - np.log(np.exp(x - x.max()).sum()) - x.max()


def np_jsd(lp: np.ndarray, lq: np.ndarray) -> float:
    p, q = np.exp(lp), np.exp(lq)
    m = 0.5 * (p + q)
    return float(0.5 * (p * np.log(p / m)).sum() + 0.5 * (q * np.log(q / m)).sum())


def np_vad(student, pos, neg, lambda_reg: float, one_sided: bool) -> dict[str, object]:
    """Step-by-step numpy version of the text-form VAD target and loss."""
    ls, lp, ln = np_logsoftmax(student), np_logsoftmax(pos), np_logsoftmax(neg)
    cp, cn = lp - lp.mean(), ln - ln.mean()
    u = cp - cn
    r = (lp - ls) - (lp - ls).mean()
    alpha = float(r @ u / (u @ u)) if u @ u > 1e-8 else 0.0
    if one_sided:
        alpha = max(alpha, 0.0)
    lq = np_logsoftmax(ls + alpha * u)
    share = min(np.linalg.norm(alpha * u) / np.linalg.norm(r), 1.0)
    w = 1.0 - share
    loss = np_jsd(ls, lq) + lambda_reg * w * np_jsd(ls, lp)
    return dict(alpha=alpha, q=np.exp(lq), share=share, loss=loss)


def one_token_batch(pos, neg) -> CreditBatch:
    """One row of two tokens: token 0 is trained, token 1 is padding with junk logits."""
    junk = [50.0, -50.0, 0.0, 0.0, 0.0]
    return CreditBatch(
        group_ids=["g"], traj_ids=["a"], turn_idx=[0], roles=["agent"],
        returns=torch.tensor([1.0]), invalid=torch.zeros(1, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 0]]),
        aux_extras={"teacher_logits": torch.tensor([[pos, junk]]),
                    "teacher_logits_no_evidence": torch.tensor([[neg, junk]])},
    )


def student_logits(values=STUDENT) -> torch.Tensor:
    return torch.tensor([[values, [0.0] * 5]], requires_grad=True)


def test_target_reconstruction_matches_numpy() -> None:
    ref = np_vad(STUDENT, POS, NEG, 0.1, one_sided=False)
    ls = torch.log_softmax(torch.tensor(STUDENT, dtype=torch.float64), -1)
    lq, alpha, share = vad_target(
        ls, torch.log_softmax(torch.tensor(POS, dtype=torch.float64), -1),
        torch.log_softmax(torch.tensor(NEG, dtype=torch.float64), -1), one_sided=False,
    )
    assert alpha.item() == pytest.approx(ref["alpha"], rel=1e-9)
    assert lq.exp().numpy() == pytest.approx(ref["q"], rel=1e-9)
    assert share.item() == pytest.approx(ref["share"], rel=1e-9)
    assert 0.0 < ref["share"] < 1.0


def test_loss_matches_numpy_and_ignores_padding() -> None:
    ref = np_vad(STUDENT, POS, NEG, 0.1, one_sided=False)
    logits = student_logits()
    aux = get_credit_assigner("vad").aux_loss(one_token_batch(POS, NEG), torch.zeros(1, 2), logits)
    assert aux.loss.item() == pytest.approx(ref["loss"], rel=1e-5)
    assert aux.metrics["credit/vad/alpha_mean"] == pytest.approx(ref["alpha"], rel=1e-5)
    aux.loss.backward()
    assert logits.grad is not None and (logits.grad[0, 1] == 0).all()


def test_descent_step_lowers_the_loss() -> None:
    plugin = get_credit_assigner("vad", lambda_reg=0.5)
    batch = one_token_batch(POS, NEG)
    logits = student_logits()
    loss = plugin.aux_loss(batch, torch.zeros(1, 2), logits).loss
    loss.backward()
    assert logits.grad is not None
    stepped = (logits - 0.5 * logits.grad).detach()
    assert plugin.aux_loss(batch, torch.zeros(1, 2), stepped).loss.item() < loss.item()


def test_one_sided_clips_negative_projection() -> None:
    # Without the evidence the teacher's logits are 2*POS - STUDENT, so u = centre(S - P) = -r
    # and the projection is exactly -1: the evidence points away from the correction.
    neg = [2 * p - s for p, s in zip(POS, STUDENT)]
    two = np_vad(STUDENT, POS, neg, 0.1, one_sided=False)
    one = np_vad(STUDENT, POS, neg, 0.1, one_sided=True)
    assert two["alpha"] == pytest.approx(-1.0)
    assert one["alpha"] == 0.0 and one["q"] == pytest.approx(np.exp(np_logsoftmax(STUDENT)))
    for sided, ref in ((False, two), (True, one)):
        aux = get_credit_assigner("vad", one_sided=sided).aux_loss(
            one_token_batch(POS, neg), torch.zeros(1, 2), student_logits()
        )
        assert aux.loss.item() == pytest.approx(ref["loss"], rel=1e-5)
        assert aux.metrics["credit/vad/alpha_mean"] == pytest.approx(ref["alpha"], abs=1e-5)


def test_irrelevant_evidence_falls_back_to_plain_teacher_term() -> None:
    # x+ and x- give the same teacher: u = 0, alpha = 0, q = p_S, w = 1.
    ref = np_vad(STUDENT, POS, POS, 0.1, one_sided=False)
    assert ref["alpha"] == 0.0
    expected = 0.1 * np_jsd(np_logsoftmax(STUDENT), np_logsoftmax(POS))
    aux = get_credit_assigner("vad").aux_loss(one_token_batch(POS, POS), torch.zeros(1, 2), student_logits())
    assert aux.loss.item() == pytest.approx(expected, rel=1e-5)


def test_top_k_and_stored_vocab_index_agree() -> None:
    batch = one_token_batch(POS, NEG)
    full_top = get_credit_assigner("vad", top_k=3).aux_loss(batch, torch.zeros(1, 2), student_logits()).loss
    idx = torch.tensor(POS).topk(3).indices  # ids 0, 4, 3
    ref = np_vad([STUDENT[i] for i in idx], [POS[i] for i in idx], [NEG[i] for i in idx], 0.1, False)
    assert full_top.item() == pytest.approx(ref["loss"], rel=1e-5)
    stored = CreditBatch(
        group_ids=["g"], traj_ids=["a"], turn_idx=[0], roles=["agent"],
        returns=torch.tensor([1.0]), invalid=torch.zeros(1, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 0]]),
        aux_extras={"teacher_logits": torch.tensor([[[POS[i] for i in idx], [0.0] * 3]]),
                    "teacher_logits_no_evidence": torch.tensor([[[NEG[i] for i in idx], [0.0] * 3]]),
                    "vocab_index": torch.stack([idx, torch.tensor([0, 1, 2])]).unsqueeze(0)},
    )
    got = get_credit_assigner("vad").aux_loss(stored, torch.zeros(1, 2), student_logits()).loss
    assert got.item() == pytest.approx(ref["loss"], rel=1e-5)


def test_missing_logits_are_explained() -> None:
    with pytest.raises(ValueError, match="current logits"):
        get_credit_assigner("vad").aux_loss(one_token_batch(POS, NEG), torch.zeros(1, 2), None)


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="top_k"):
        VADCreditConfig(top_k=1)
    with pytest.raises(ValueError, match="lambda_reg"):
        VADCreditConfig(lambda_reg=-1.0)


def test_share_below_one_where_the_evidence_does_not_explain_the_correction() -> None:
    # Teacher with and without the evidence differ by u_k = r + k*v, with v orthogonal to the
    # correction r: the larger k, the less of r the evidence explains. By hand:
    # alpha_k = |r|^2 / (|r|^2 + k^2 |v|^2), share_k = |r| / sqrt(|r|^2 + k^2 |v|^2), w_k = 1 - share_k.
    # k = inf stands for u = v (the evidence explains none of r): alpha = share = 0, w = 1.
    s = np.asarray(STUDENT)
    pos = np.asarray(POS)
    r = (pos - s) - (pos - s).mean()
    v = np.array([1.0, -1.0, 1.0, -1.0, 0.0])
    v = v - v.mean()
    v = v - (v @ r) / (r @ r) * r
    assert abs(v @ r) < 1e-12 and v @ v > 0.1
    ks = [0.0, 0.5, 1.0, 2.0, np.inf]
    us = [v if np.isinf(k) else r + k * v for k in ks]
    negs = [(pos - u).tolist() for u in us]
    rr, vv = r @ r, v @ v
    alpha = [rr / (rr + k * k * vv) if np.isfinite(k) else 0.0 for k in ks]
    share = [np.sqrt(rr / (rr + k * k * vv)) if np.isfinite(k) else 0.0 for k in ks]
    for neg, a, sh in zip(negs, alpha, share):
        ref = np_vad(STUDENT, POS, neg, 0.1, one_sided=False)  # the step-by-step formula agrees
        assert ref["alpha"] == pytest.approx(a, abs=1e-9) and ref["share"] == pytest.approx(sh, abs=1e-9)
    assert alpha[0] == pytest.approx(1.0) and share[0] == pytest.approx(1.0)  # u = r: all explained
    assert all(a < 1 - 0.05 for a in alpha[1:]) and all(sh < 1 - 0.05 for sh in share[1:])

    n = len(ks)
    junk = [50.0, -50.0, 0.0, 0.0, 0.0]
    batch = CreditBatch(
        group_ids=["g"], traj_ids=["a"], turn_idx=[0], roles=["agent"],
        returns=torch.tensor([1.0]), invalid=torch.zeros(1, dtype=torch.bool),
        completion_mask=torch.tensor([[1] * n + [0]]),
        aux_extras={"teacher_logits": torch.tensor([[POS] * n + [junk]], dtype=torch.float64),
                    "teacher_logits_no_evidence": torch.tensor([negs + [junk]], dtype=torch.float64)},
    )
    logits = torch.tensor([[STUDENT] * n + [[0.0] * 5]], dtype=torch.float64, requires_grad=True)
    _, diag = vad_token_loss(
        logits[:, :n], batch.aux_extras["teacher_logits"][:, :n], batch.aux_extras["teacher_logits_no_evidence"][:, :n],
        lambda_reg=0.1,
        one_sided=False)
    got_alpha, got_share, got_w = (diag[key][0].tolist() for key in ("alpha", "share", "reg_weight"))
    assert got_alpha == pytest.approx(alpha, abs=1e-6) and got_share == pytest.approx(share, abs=1e-6)
    assert got_w == pytest.approx([1 - sh for sh in share], abs=1e-6)
    assert all(b > a for a, b in zip(got_w, got_w[1:]))  # the weight grows as the share shrinks
    aux = get_credit_assigner("vad").aux_loss(batch, torch.zeros(1, n + 1), logits)
    assert aux.metrics["credit/vad/alpha_mean"] == pytest.approx(np.mean(alpha), abs=1e-6)
    assert aux.metrics["credit/vad/share_mean"] == pytest.approx(np.mean(share), abs=1e-6)
    assert aux.metrics["credit/vad/reg_weight_mean"] == pytest.approx(1 - np.mean(share), abs=1e-6)


def two_group_batch() -> CreditBatch:
    """Two rows of one group with different returns (GRPO gives them non-zero advantages)."""
    return CreditBatch(
        group_ids=["g", "g"], traj_ids=["a", "b"], turn_idx=[0, 0], roles=["agent", "agent"],
        returns=torch.tensor([1.0, 0.0]), invalid=torch.zeros(2, dtype=torch.bool),
        completion_mask=torch.tensor([[1, 1], [1, 0]]),
        aux_extras={"teacher_logits": torch.tensor([[POS, POS], [POS, POS]]),
                    "teacher_logits_no_evidence": torch.tensor([[NEG, NEG], [NEG, NEG]])},
    )


def test_vad_target_makes_the_reconstructed_target_the_objective() -> None:
    batch = two_group_batch()
    reward = get_credit_assigner("vad")
    target = get_credit_assigner("vad", primary="target")
    assert (reward.config.reward_coef, target.config.reward_coef) == (1.0, 0.0)
    grpo = reward.advantages(batch).advantages
    assert grpo.abs().sum() > 0  # the default variant is driven by the reward
    out = target.advantages(batch)
    assert (out.advantages == 0).all() and out.metrics["credit/vad/reward_coef"] == 0.0
    assert target.rows_with_other_terms(batch).all()  # every row still trains on the target
    # the target loss is the same VAD loss: only the weight of the reward changes
    logits = torch.tensor([[STUDENT, STUDENT], [STUDENT, STUDENT]], requires_grad=True)
    assert target.aux_loss(batch, torch.zeros(2, 2), logits).loss.item() == pytest.approx(
        np_vad(STUDENT, POS, NEG, 0.1, one_sided=False)["loss"], rel=1e-5)
    assert target.one_turn_equivalent() == ("grpo", 0.0)
    mixed = get_credit_assigner("vad", primary="target", reward_coef=0.25).advantages(batch).advantages
    assert torch.allclose(mixed, 0.25 * grpo)


def test_vad_target_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="primary must be one of reward, target"):
        VADCreditConfig(primary="teacher")
    with pytest.raises(ValueError, match="coef > 0"):
        VADCreditConfig(primary="target", coef=0.0)
    with pytest.raises(ValueError, match="reward_coef must be >= 0"):
        VADCreditConfig(reward_coef=-1.0)

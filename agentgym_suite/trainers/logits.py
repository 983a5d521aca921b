"""Next-token logits over the completion tokens, for plug-ins that distil whole distributions (VAD).

TRL's log-prob pass uses a fused LM head that returns only the log-prob of each sampled token,
so the trainer runs its own forward pass when a plug-in needs the distribution: once per
generation batch for the teacher (no gradient, with the evidence and with it ablated) and once
per micro-batch for the student (with gradient).

Memory: only the logits of the completion positions are materialised (``logits_to_keep``),
one chunk of rows at a time; the teacher's are reduced at once to the ``k`` tokens most likely
under the teacher with evidence, so what is stored for a batch is ``(rows, tokens, k)``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def completion_logits(model: Any, input_ids: Tensor, attention_mask: Tensor, keep: int) -> Tensor:
    """Logits ``(B, keep, V)`` predicting the last ``keep`` tokens of ``input_ids``.

    Position ``t`` of the result is the distribution the model gave the ``t``-th completion
    token, i.e. the logits at the position just before it.
    """
    try:
        out = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep + 1)
    except TypeError:  # models without logits_to_keep compute every position
        out = model(input_ids=input_ids, attention_mask=attention_mask)
    logits = out.logits if hasattr(out, "logits") else out[0]
    return logits[:, -keep - 1 : -1, :]


@torch.no_grad()
def teacher_logits(
    model: Any,
    pos: tuple[Tensor, Tensor],
    neg: tuple[Tensor, Tensor],
    completion_ids: Tensor,
    *,
    top_k: int | None,
    batch_size: int,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """Teacher logits over the completion with the evidence (``pos``) and with it ablated (``neg``).

    ``model`` is the fixed teacher; ``pos`` and ``neg`` are left-padded ``(ids, mask)`` prompts of
    the same rows (``trainers.teacher.evidence_prompts``);
    ``completion_ids`` ``(R, T)`` right-padded completions (their padding is attended to, as in
    the student's pass, and masked out by the loss). With ``top_k`` the result is
    ``(pos_logits, neg_logits, index)``, each ``(R, T, k)``, where ``index`` holds the vocabulary
    ids (top-k under ``pos``); with ``top_k=None`` both logits are ``(R, T, V)`` and the index is
    None.
    """
    keep = completion_ids.size(1)
    c_mask = torch.ones_like(completion_ids)
    out_pos, out_neg, out_idx = [], [], []
    for start in range(0, completion_ids.size(0), batch_size):
        end = start + batch_size
        comp = completion_ids[start:end]
        ids_p = torch.cat([pos[0][start:end], comp], dim=1)
        mask_p = torch.cat([pos[1][start:end], c_mask[start:end]], dim=1)
        ids_n = torch.cat([neg[0][start:end], comp], dim=1)
        mask_n = torch.cat([neg[1][start:end], c_mask[start:end]], dim=1)
        lp = completion_logits(model, ids_p, mask_p, keep).float()
        ln = completion_logits(model, ids_n, mask_n, keep).float()
        if top_k is not None and top_k < lp.size(-1):
            idx = lp.topk(top_k, dim=-1).indices
            lp, ln = lp.gather(-1, idx), ln.gather(-1, idx)
            out_idx.append(idx)
        out_pos.append(lp)
        out_neg.append(ln)
    index = torch.cat(out_idx) if out_idx else None
    return torch.cat(out_pos), torch.cat(out_neg), index

"""Next-token logits over the completion tokens, for plug-ins that distil whole distributions.

TRL's log-prob pass uses a fused LM head that returns only the log-prob of each sampled token,
so the trainer runs its own forward pass when a plug-in needs the distribution: once per
generation batch for the teacher (no gradient, after each set of prompts the plug-in's
``teacher_logit_prompts`` gives) and once per micro-batch for the student (with gradient).

Memory: only the logits of the completion positions are materialised (``logits_to_keep``),
one chunk of rows at a time; the teacher's are reduced at once to the ``k`` tokens most likely
after the first prompt set, so what is stored for a batch is ``(rows, tokens, k)`` per set.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    prompts: Sequence[tuple[Tensor, Tensor]],
    completion_ids: Tensor,
    *,
    top_k: int | None,
    batch_size: int,
) -> tuple[list[Tensor], Tensor | None]:
    """Teacher logits over the completion after each set of prompts.

    ``model`` is the fixed teacher; each of ``prompts`` is a left-padded ``(ids, mask)`` prompt of
    the same rows (a plug-in's ``teacher_logit_prompts``, e.g. VAD's ``x+`` and ``x-``);
    ``completion_ids`` ``(R, T)`` right-padded completions (their padding is attended to, as in
    the student's pass, and masked out by the loss). With ``top_k`` the result is one ``(R, T, k)``
    tensor per prompt set and ``index``, the vocabulary ids (the top-k after the first set); with
    ``top_k=None`` the logits are ``(R, T, V)`` and the index is None.
    """
    if not prompts:
        raise ValueError("teacher_logits needs at least one set of prompts.")
    keep = completion_ids.size(1)
    c_mask = torch.ones_like(completion_ids)
    outs: list[list[Tensor]] = [[] for _ in prompts]
    out_idx = []
    for start in range(0, completion_ids.size(0), batch_size):
        end = start + batch_size
        comp = completion_ids[start:end]
        chunk = []
        for ids, mask in prompts:
            full_ids = torch.cat([ids[start:end], comp], dim=1)
            full_mask = torch.cat([mask[start:end], c_mask[start:end]], dim=1)
            chunk.append(completion_logits(model, full_ids, full_mask, keep).float())
        if top_k is not None and top_k < chunk[0].size(-1):
            idx = chunk[0].topk(top_k, dim=-1).indices
            chunk = [logits.gather(-1, idx) for logits in chunk]
            out_idx.append(idx)
        for out, logits in zip(outs, chunk):
            out.append(logits)
    index = torch.cat(out_idx) if out_idx else None
    return [torch.cat(out) for out in outs], index

"""VAD's teacher prompts: the privileged prompt ``x+`` and its counterfactual ``x-``.

``x-`` is the same privileged prompt with the evidence ablated, token for token: header, student
prompt and position of every token are those of ``x+``; only the evidence tokens are replaced, by
as many blank tokens (``blank``) or by as many tokens of an unrelated passage (``unrelated``). The
trainer runs its fixed teacher on both (:meth:`VADCredit.teacher_logit_prompts
<agentgym_suite.trainers.credit.vad.plugin.VADCredit.teacher_logit_prompts>` hands them over).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from agentgym_suite.trainers.credit.self_distillation.context import PRIVILEGED_HEADER, PRIVILEGED_TAIL, teacher_prompt_ids

COUNTERFACTUALS = ("blank", "unrelated")
"""How VAD's ``x-`` ablates the evidence: ``blank`` replaces each evidence token by a blank
token; ``unrelated`` by the tokens of another task's evidence in the same batch (or of
``NEUTRAL_PASSAGE`` when the batch holds no other task), fitted to the same length."""

BLANK_TEXTS = (" ", "_", ".")
"""Candidates for the blank token, in order: the first that encodes to exactly one token."""

NEUTRAL_PASSAGE = (
    "The river bends twice before it reaches the valley floor. In spring the water is cold and "
    "clear, and by late summer it runs low between wide banks of pale stones. A narrow footpath "
    "follows the eastern bank for most of its length, passing an old stone bridge, a row of "
    "willows and a field where sheep graze in the afternoon."
)
"""Fixed text, unrelated to every task, that fills an ``unrelated`` counterfactual when the batch
holds no evidence of another task."""

Encode = Callable[[str], Sequence[int]]
"""Text -> token ids, without special tokens."""


def blank_token_id(encode: Encode) -> int:
    """The id of the first of ``BLANK_TEXTS`` that the tokenizer encodes as one token."""
    for text in BLANK_TEXTS:
        ids = list(encode(text))
        if len(ids) == 1:
            return int(ids[0])
    raise ValueError(
        f"the tokenizer encodes none of {list(BLANK_TEXTS)} as a single token, so the evidence cannot be "
        "blanked token for token; use counterfactual: unrelated."
    )


def fit_length(ids: Sequence[int], length: int) -> list[int]:
    """``ids`` repeated and cut to exactly ``length`` tokens (``ids`` must be non-empty if ``length > 0``)."""
    if length <= 0:
        return []
    if not ids:
        raise ValueError("cannot fill a span from an empty passage.")
    reps = -(-length // len(ids))
    return (list(ids) * reps)[:length]


def unrelated_donors(evidence: Sequence[Sequence[int]], task_ids: Sequence[Any]) -> list[int | None]:
    """For each row, the row whose evidence replaces its own in an ``unrelated`` counterfactual.

    The donor of row ``i`` is the first row after it, cyclically, of another task whose evidence
    is non-empty and differs from row ``i``'s; ``None`` when no row qualifies (then
    ``NEUTRAL_PASSAGE`` is used). Deterministic in the batch order.
    """
    n = len(evidence)
    donors: list[int | None] = []
    for i in range(n):
        donor = None
        for step in range(1, n):
            j = (i + step) % n
            if task_ids[j] != task_ids[i] and evidence[j] and list(evidence[j]) != list(evidence[i]):
                donor = j
                break
        donors.append(donor)
    return donors


def evidence_prompts(
    encode: Encode,
    texts: Sequence[str],
    prompts: Sequence[Sequence[int]],
    task_ids: Sequence[Any],
    *,
    counterfactual: str,
    max_prompt_tokens: int,
) -> tuple[list[list[int]], list[list[int]]]:
    """VAD's teacher prompts ``(x+, x-)`` of each row, as token ids.

    ``x+`` is the privileged prefix (header, the row's evidence ``texts[i]``, tail) before the
    student prompt ``prompts[i]`` (whose oldest tokens go first when too long, as in
    :func:`teacher_prompt_ids`); ``x-`` is the same sequence with the evidence tokens replaced
    according to ``counterfactual`` (see ``COUNTERFACTUALS``). The two have equal length and
    differ only inside the evidence span.
    """
    if counterfactual not in COUNTERFACTUALS:
        raise ValueError(
            f"counterfactual={counterfactual!r} is not supported; choose one of {', '.join(COUNTERFACTUALS)}."
        )
    if not len(texts) == len(prompts) == len(task_ids):
        raise ValueError(
            f"got {len(texts)} texts, {len(prompts)} prompts and {len(task_ids)} task ids; give one per row."
        )
    header, tail = list(encode(PRIVILEGED_HEADER)), list(encode(PRIVILEGED_TAIL))
    evidence = [list(encode(t)) for t in texts]
    if counterfactual == "blank":
        blank = blank_token_id(encode)
        fillers = [[blank] * len(ev) for ev in evidence]
    else:
        neutral = list(encode(NEUTRAL_PASSAGE))
        donors = unrelated_donors(evidence, task_ids)
        fillers = [fit_length(neutral if d is None else evidence[d], len(ev)) for ev, d in zip(evidence, donors)]
    pos, neg = [], []
    for ev, filler, prompt in zip(evidence, fillers, prompts):
        prefix = header + ev + tail
        full = teacher_prompt_ids(prefix, prompt, max_prompt_tokens + len(prefix))
        pos.append(full)
        neg.append(header + filler + tail + full[len(prefix):])
    return pos, neg

"""Teacher context (ALGORITHMS §3): the privileged text put before a row's prompt.

The teacher is the same pre-update policy whose prompt is prefixed, as raw text before the
chat-templated prompt, with ``"[Privileged Skill Information]\\n{text}\\n\\n"``. The text comes
from one of three sources:

* ``skills`` — the suite's skill texts: ``general.md`` plus the file of the task's family,
  which the env reports at reset as ``info["task_family"]`` (ALFWorld task type, WebShop
  product category, Search question kind; see ``TextEnv.task_family``);
* ``oracle`` — the env's oracle walkthrough from the row's state;
* ``env_response`` — the real env's response to the row's action.

When the prefixed prompt is too long, the student prompt loses its oldest tokens (history)
and the privileged text is kept whole.

VAD's counterfactual ``x-`` (:func:`evidence_prompts`) is the same privileged prompt with the
evidence ablated, token for token: header, student prompt and position of every token are
those of ``x+``; only the evidence tokens are replaced, by as many blank tokens (``blank``) or
by as many tokens of an unrelated passage (``unrelated``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

PRIVILEGED_HEADER = "[Privileged Skill Information]\n"
PRIVILEGED_TAIL = "\n\n"
SKILLS_DIR = Path(__file__).parent / "skills"


@lru_cache(maxsize=64)
def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8").strip()


def skill_text(family: str, skills_dir: str | Path | None = None) -> str:
    """``general.md`` plus ``<family>.md`` from ``skills_dir`` (default: the suite's texts)."""
    root = Path(skills_dir) if skills_dir else SKILLS_DIR
    general = root / "general.md"
    if not general.exists():
        raise FileNotFoundError(
            f"no general.md in skills directory {root}; write one (plus <family>.md files) or unset skills_dir."
        )
    parts = [_read(str(general))]
    if family and re.fullmatch(r"[A-Za-z0-9_\-]+", family) and (root / f"{family}.md").exists():
        parts.append(_read(str(root / f"{family}.md")))
    return "\n\n".join(parts)


def oracle_text(actions: Sequence[str] | None) -> str:
    """Privileged text from an oracle walkthrough."""
    if not actions:
        return "No oracle walkthrough is available from this state."
    steps = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(actions))
    return f"An action sequence that solves the task from the current state:\n{steps}"


def env_response_text(response: str) -> str:
    """Privileged text from the real env's response to the row's action."""
    return f"The environment answers the next action with:\n{response}"


def privileged_prefix(text: str) -> str:
    """The raw text put before the chat-templated student prompt."""
    return f"{PRIVILEGED_HEADER}{text}{PRIVILEGED_TAIL}"


def teacher_prompt_ids(prefix_ids: Sequence[int], prompt_ids: Sequence[int], max_tokens: int) -> list[int]:
    """Privileged prefix + student prompt, truncating the prompt's oldest tokens, never the prefix.

    If the prefix alone exceeds ``max_tokens`` it is kept whole and only the last quarter of
    the budget (at least one token) is left for the prompt.
    """
    room = max(max_tokens - len(prefix_ids), max(1, max_tokens // 4))
    kept = list(prompt_ids)[-room:]
    return list(prefix_ids) + kept


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

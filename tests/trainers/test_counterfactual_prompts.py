"""VAD's teacher prompts: ``x+`` is the privileged prompt, ``x-`` the same prompt with the
evidence ablated token for token (blank, or an unrelated passage of the same length), never
the student's own prompt."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from agentgym_suite.llm.tiny import tiny_model_dir
from agentgym_suite.trainers.credit.vad import (
    NEUTRAL_PASSAGE,
    VADCreditConfig,
    blank_token_id,
    evidence_prompts,
    fit_length,
    unrelated_donors,
)
from agentgym_suite.trainers.teacher import PRIVILEGED_HEADER, PRIVILEGED_TAIL

EVIDENCE = ["say a then done", "say e", "the letter is i, say it twice"]
TASKS = ["t0", "t1", "t2"]


@pytest.fixture(scope="module")
def encode():
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    return lambda text: tok.encode(text, add_special_tokens=False)


@pytest.fixture(scope="module")
def prompts(encode):
    return [encode(f"Task {t}: collect a letter. Your action:") for t in TASKS]


def spans(encode, evidence: str) -> tuple[int, int]:
    """Start and end of the evidence tokens inside the privileged prompt."""
    start = len(encode(PRIVILEGED_HEADER))
    return start, start + len(encode(evidence))


def test_blank_replaces_only_the_evidence_tokens(encode, prompts) -> None:
    pos, neg = evidence_prompts(encode, EVIDENCE, prompts, TASKS, counterfactual="blank", max_prompt_tokens=512)
    blank = blank_token_id(encode)
    header, tail = encode(PRIVILEGED_HEADER), encode(PRIVILEGED_TAIL)
    for text, prompt, p, n in zip(EVIDENCE, prompts, pos, neg):
        start, end = spans(encode, text)
        assert p == header + encode(text) + tail + prompt  # x+: the privileged prompt
        assert len(n) == len(p)  # same positions for every token
        assert n[:start] == header and n[end:] == tail + prompt  # frame and student prompt kept
        assert n[start:end] == [blank] * (end - start) and n[start:end] != p[start:end]
        assert n != prompt  # never the student's own context


def test_blank_is_a_single_whitespace_token(encode) -> None:
    assert encode(" ") == [blank_token_id(encode)]
    with pytest.raises(ValueError, match="unrelated"):
        blank_token_id(lambda text: [1, 2])  # no one-token candidate: the error names the other setting


def test_unrelated_takes_the_next_other_task_and_keeps_length(encode, prompts) -> None:
    pos, neg = evidence_prompts(encode, EVIDENCE, prompts, TASKS, counterfactual="unrelated", max_prompt_tokens=512)
    for i, (text, p, n) in enumerate(zip(EVIDENCE, pos, neg)):
        start, end = spans(encode, text)
        donor = encode(EVIDENCE[(i + 1) % 3])
        assert n[start:end] == fit_length(donor, end - start)
        assert n[:start] == p[:start] and n[end:] == p[end:] and len(n) == len(p)
    # the donor is repeated when shorter (row 0 <- "say e") and cut when longer (row 1 <- row 2's text)
    assert len(encode(EVIDENCE[1])) < len(encode(EVIDENCE[0])) < len(encode(EVIDENCE[2]))
    again = evidence_prompts(encode, EVIDENCE, prompts, TASKS, counterfactual="unrelated", max_prompt_tokens=512)
    assert again == (pos, neg)  # deterministic


def test_rows_of_the_same_task_never_donate() -> None:
    ev = [[1, 2], [3, 4], [5, 6], [1, 2]]
    assert unrelated_donors(ev, ["a", "a", "b", "b"]) == [2, 2, 0, 1]
    # identical or empty evidence of another task does not count either
    assert unrelated_donors([[1, 2], [1, 2], []], ["a", "b", "c"]) == [None, None, 0]


def test_one_task_batch_falls_back_to_the_neutral_passage(encode, prompts) -> None:
    texts, tasks = EVIDENCE[:2], ["t0", "t0"]
    pos, neg = evidence_prompts(encode, texts, prompts[:2], tasks, counterfactual="unrelated", max_prompt_tokens=512)
    for text, p, n in zip(texts, pos, neg):
        start, end = spans(encode, text)
        assert n[start:end] == encode(NEUTRAL_PASSAGE)[: end - start] != p[start:end]


def test_long_prompts_lose_the_same_history_on_both_sides(encode) -> None:
    prompt = list(range(100, 300))
    pos, neg = evidence_prompts(encode, EVIDENCE[:1], [prompt], ["t0"], counterfactual="blank", max_prompt_tokens=50)
    assert pos[0][-50:] == prompt[-50:] == neg[0][-50:]
    assert len(pos[0]) == len(neg[0]) == len(encode(PRIVILEGED_HEADER + EVIDENCE[0] + PRIVILEGED_TAIL)) + 50


def test_empty_evidence_leaves_nothing_to_ablate(encode, prompts) -> None:
    pos, neg = evidence_prompts(encode, [""], prompts[:1], ["t0"], counterfactual="unrelated", max_prompt_tokens=512)
    assert pos == neg


def test_fit_length() -> None:
    assert fit_length([1, 2, 3], 7) == [1, 2, 3, 1, 2, 3, 1]
    assert fit_length([1, 2, 3], 2) == [1, 2]
    assert fit_length([], 0) == []
    with pytest.raises(ValueError, match="empty"):
        fit_length([], 3)


def test_bad_settings_are_rejected(encode, prompts) -> None:
    with pytest.raises(ValueError, match="blank, unrelated"):
        evidence_prompts(encode, EVIDENCE, prompts, TASKS, counterfactual="student", max_prompt_tokens=512)
    with pytest.raises(ValueError, match="one per row"):
        evidence_prompts(encode, EVIDENCE, prompts[:1], TASKS, counterfactual="blank", max_prompt_tokens=512)
    with pytest.raises(ValueError, match="counterfactual"):
        VADCreditConfig(counterfactual="student")
    assert VADCreditConfig().counterfactual == "blank"

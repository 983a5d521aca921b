"""Padding-aware micro-batching: every row once, padding cut, log-probs unchanged."""

from __future__ import annotations

import pytest
import torch

from agentgym_suite.trainers.batching import first_real_column, length_sorted_chunks, trim_left_padding
from agentgym_suite.trainers.rows import pad_left, pad_right


def _batch(prompts: list[list[int]], completions: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, int]:
    width_p = max(len(p) for p in prompts)
    width_c = max(len(c) for c in completions)
    p_ids, p_mask = pad_left(prompts, 0, width_p)
    c_ids = pad_right(completions, 0, width_c, torch.long)
    c_mask = pad_right([[1] * len(c) for c in completions], 0, width_c, torch.long)
    return torch.cat([p_ids, c_ids], 1), torch.cat([p_mask, c_mask], 1), width_c


def test_first_real_column_and_trim() -> None:
    ids, mask, keep = _batch([[5, 6, 7, 8], [9, 10]], [[3], [4, 4]])
    assert first_real_column(mask, keep) == 0
    ids2, mask2, _ = _batch([[5, 6], [9, 10]], [[3], [4, 4]])
    padded_ids = torch.cat([torch.zeros(2, 3, dtype=torch.long), ids2], 1)
    padded_mask = torch.cat([torch.zeros(2, 3, dtype=torch.long), mask2], 1)
    cut_ids, cut_mask = trim_left_padding(padded_ids, padded_mask, keep)
    assert torch.equal(cut_ids, ids2) and torch.equal(cut_mask, mask2)


def test_trim_never_cuts_into_completion_columns() -> None:
    mask = torch.zeros(2, 6, dtype=torch.long)  # rows with nothing attended (padding rows)
    assert first_real_column(mask, 2) == 4
    ids, cut = trim_left_padding(torch.ones(2, 6, dtype=torch.long), mask, 2)
    assert ids.shape == (2, 2) and cut.shape == (2, 2)


def test_chunks_cover_every_row_once_sorted_by_length() -> None:
    prompts = [[1] * n for n in (3, 9, 1, 7, 5)]
    _, mask, keep = _batch(prompts, [[2]] * 5)
    chunks = list(length_sorted_chunks(mask, keep, 2))
    seen = torch.cat([index for index, _ in chunks]).tolist()
    assert sorted(seen) == [0, 1, 2, 3, 4]
    assert seen == [1, 3, 4, 0, 2]  # longest first
    assert [start for _, start in chunks] == [0, 4, 8]  # each chunk starts where its longest row does
    with pytest.raises(ValueError, match="batch_size"):
        list(length_sorted_chunks(mask, keep, 0))


def test_trimmed_log_probs_match_padded_ones() -> None:
    from transformers import AutoModelForCausalLM

    from agentgym_suite.llm.tiny import tiny_model_dir

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())).eval()
    prompts = [[10 + i for i in range(n)] for n in (4, 30, 12)]
    completions = [[40, 41, 42], [43], [44, 45]]
    ids, mask, keep = _batch(prompts, completions)

    def logps(input_ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=attention).logits[:, -keep - 1 : -1]
        return torch.log_softmax(logits.float(), -1).gather(-1, input_ids[:, -keep:, None]).squeeze(-1)

    full = logps(ids, mask)
    for index, start in length_sorted_chunks(mask, keep, 1):
        part = logps(ids[index, start:], mask[index, start:])
        real = mask[index, -keep:].bool()
        assert torch.allclose(part[real], full[index][real], atol=1e-4)

"""Padding-aware micro-batching for the trainer's no-gradient log-prob passes.

A generation batch is left-padded to its longest prompt (the privileged teacher prompts are
longer still), so a fixed split into micro-batches spends much of its compute on padding
when row lengths differ (multi-turn rows, several skill families in one batch).
:func:`length_sorted_chunks` orders rows by their real length and cuts each micro-batch's
leading all-padding columns; :func:`trim_left_padding` does the cut for one batch.

Cutting leading padding only shifts every real token's position by the same amount; with
rotary position embeddings attention depends on relative positions only, so the log-probs
are unchanged up to floating-point rounding.
"""

from __future__ import annotations

from typing import Iterator

import torch
from torch import Tensor


def first_real_column(attention_mask: Tensor, keep: int) -> int:
    """Index of the first column where any row attends, never beyond the last ``keep`` columns."""
    width = attention_mask.size(1)
    columns = attention_mask.any(dim=0).nonzero()
    first = int(columns[0]) if columns.numel() else width - keep
    return max(0, min(first, width - keep))


def trim_left_padding(input_ids: Tensor, attention_mask: Tensor, keep: int) -> tuple[Tensor, Tensor]:
    """Drop the leading columns that are padding in every row (the last ``keep`` are always kept)."""
    start = first_real_column(attention_mask, keep)
    if start == 0:
        return input_ids, attention_mask
    return input_ids[:, start:], attention_mask[:, start:]


def length_sorted_chunks(attention_mask: Tensor, keep: int, batch_size: int) -> Iterator[tuple[Tensor, int]]:
    """Yield ``(row_index, start_column)`` micro-batches of at most ``batch_size`` rows.

    Rows are sorted by real length (attended tokens) so each micro-batch holds rows of similar
    length; ``start_column`` is where that micro-batch's real tokens begin.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    lengths = attention_mask.sum(dim=1)
    order = torch.argsort(lengths, descending=True, stable=True)
    for begin in range(0, order.numel(), batch_size):
        index = order[begin : begin + batch_size]
        yield index, first_real_column(attention_mask[index], keep)

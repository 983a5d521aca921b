"""SeededRows: each row samples from its own seed, with the distribution its scores give."""

from __future__ import annotations

import torch

from agentgym_suite.llm.sampling import SeededRows, row_seeds


def _pick(processor: SeededRows, scores: torch.Tensor) -> list[int | None]:
    out = processor(torch.zeros((scores.shape[0], 1), dtype=torch.long), scores)
    return [int(row.argmax()) if torch.isinf(row).sum() == row.numel() - 1 else None for row in out]


def test_seeded_rows_follow_their_distribution_and_ignore_the_batch() -> None:
    scores = torch.log(torch.tensor([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]]))
    counts = torch.zeros(2, 4)
    for seed in range(3000):
        picks = _pick(SeededRows([seed, seed + 10_000]), scores)
        for row, token in enumerate(picks):
            counts[row, token] += 1
    freq = counts / counts.sum(dim=1, keepdim=True)
    assert torch.allclose(freq, scores.exp(), atol=0.03)
    assert counts[0, 3] == 0  # a token with no probability (masked by top-p) is never drawn
    alone = [_pick(SeededRows([s]), scores[1:])[0] for s in range(10_000, 10_050)]
    together = [_pick(SeededRows([s - 10_000, s]), scores)[1] for s in range(10_000, 10_050)]
    assert alone == together
    assert _pick(SeededRows([None, 3]), scores)[0] is None  # an unseeded row is left to generate()


def test_row_seeds_give_each_sample_of_a_prompt_its_own_stream() -> None:
    rows = row_seeds([5, None, 5], 3)
    assert rows[0] == 5 and rows[3:6] == [None] * 3 and rows[6:9] == rows[0:3]
    assert len(set(rows[0:3])) == 3

"""A logits processor that records log-probabilities and applies the sampling settings itself.

Hugging Face ``generate`` warps logits before sampling; a trainer needs the log-probability
of each sampled token under the *unwarped* model. :class:`RecordingProcessor` sees the raw
logits (it is the only processor), keeps one step of log-softmax, reads the token sampled
from it on the next call and then returns the warped scores generate samples from: the
repetition penalty, temperature, top-k, top-p and min-p, in Hugging Face's order (the penalty,
top-k and min-p with Hugging Face's own processors). Memory stays at one ``(batch, vocab)``
tensor instead of one per generated token.
"""

from __future__ import annotations

import torch
from transformers import MinPLogitsWarper, RepetitionPenaltyLogitsProcessor, TopKLogitsWarper


class RecordingProcessor:
    """Record raw log-probs of sampled tokens; warp scores with temperature and top-p.

    Args:
        temperature: divide logits by this before sampling (ignored when greedy).
        top_p: keep the smallest set of tokens whose probability mass reaches ``top_p``.
        greedy: leave the scores as they are (argmax decoding; the repetition penalty still applies).
        top_k: keep the ``top_k`` most likely tokens (0 = off).
        min_p: drop tokens less likely than ``min_p`` times the most likely one (0 = off).
        repetition_penalty: Hugging Face's penalty on tokens already in the sequence (1 = off).
        logprobs_at_temperature: record the log-probs of ``logits / temperature`` (what TRL's loss
            computes as the policy's log-probs) instead of the raw logits'; the log-probs an
            asynchronous learner compares with its own (``old_per_token_logps``) must be these.
    """

    def __init__(self, temperature: float, top_p: float, greedy: bool, *, top_k: int = 0, min_p: float = 0.0,
                 repetition_penalty: float = 1.0, logprobs_at_temperature: bool = False) -> None:
        self.temperature = temperature
        self.record_scale = temperature if logprobs_at_temperature and not greedy and temperature > 0 else 1.0
        self.top_p = top_p
        self.greedy = greedy
        self.penalty = RepetitionPenaltyLogitsProcessor(repetition_penalty) if repetition_penalty != 1.0 else None
        self.top_k = TopKLogitsWarper(top_k) if top_k and not greedy else None
        self.min_p = MinPLogitsWarper(min_p) if min_p and not greedy else None
        self._pending: torch.Tensor | None = None
        self.steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._pending is not None:
            self.collect(input_ids[:, -1])
        raw = scores.float()
        self._pending = torch.log_softmax(raw / self.record_scale if self.record_scale != 1.0 else raw, dim=-1)
        if self.penalty is not None:
            scores = self.penalty(input_ids, scores)
        if self.greedy:
            return scores
        warped = scores / self.temperature
        if self.top_k is not None:
            warped = self.top_k(input_ids, warped)
        if self.top_p < 1.0:
            sorted_scores, order = torch.sort(warped, descending=True, dim=-1)
            cumulative = torch.softmax(sorted_scores, dim=-1).cumsum(dim=-1)
            drop_sorted = cumulative - torch.softmax(sorted_scores, dim=-1) >= self.top_p
            drop = drop_sorted.scatter(-1, order, drop_sorted)
            warped = warped.masked_fill(drop, float("-inf"))
        if self.min_p is not None:
            warped = self.min_p(input_ids, warped)
        return warped

    def collect(self, tokens: torch.Tensor) -> None:
        """Store the log-prob of ``tokens`` (one per row) under the pending step."""
        if self._pending is None:
            return
        self.steps.append(self._pending.gather(-1, tokens.view(-1, 1).to(self._pending.device)).squeeze(-1).cpu())
        self._pending = None

    def logprobs(self) -> torch.Tensor:
        """``(batch, steps)`` log-probs of the generated tokens (call :meth:`collect` for the last one first)."""
        if not self.steps:
            return torch.zeros(0, 0)
        return torch.stack(self.steps, dim=1)


class StopStrings:
    """Stopping criterion: a row is done once its *completion* (not the prompt) holds a stop string.

    Hugging Face's own ``stop_strings`` also match text that began in the prompt; this one
    only decodes the last few generated tokens of each row.
    """

    def __init__(self, tokenizer: object, stops: tuple[str, ...], prompt_width: int) -> None:
        self.tokenizer = tokenizer
        self.stops = stops
        self.prompt_width = prompt_width
        self.window = 4 * max(len(s) for s in stops) + 2

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: object) -> torch.BoolTensor:
        generated = input_ids[:, self.prompt_width :]
        tail = generated[:, -self.window :].tolist()
        done = [any(s in self.tokenizer.decode(row, skip_special_tokens=False) for s in self.stops) for row in tail]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


class SeededRows:
    """Logits processor that samples each row with a random stream of its own.

    Put it after :class:`RecordingProcessor` (whose warped scores it samples from). Each seeded
    row draws one uniform number per step from its own CPU ``torch.Generator`` and picks its
    token by inverting the cumulative distribution of its own row (one vectorised
    ``searchsorted`` for the batch); ``generate`` is handed a one-hot distribution, so what it
    then samples from the global RNG cannot change the choice. A row's tokens thus depend on its
    seed and its own logits only, never on the other rows of the batch. Rows whose seed is None
    are left to ``generate``.

    Args:
        seeds: one seed (or None) per row of the batch.
    """

    def __init__(self, seeds: list[int | None]) -> None:
        self.seeds = seeds
        self.rows = [i for i, s in enumerate(seeds) if s is not None]
        self._generators = [torch.Generator().manual_seed(seeds[i]) for i in self.rows]  # type: ignore[arg-type]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if not self.rows:
            return scores
        rows = torch.tensor(self.rows, device=scores.device)
        draws = torch.cat([torch.rand(1, generator=g, dtype=torch.float64) for g in self._generators])
        cdf = torch.softmax(scores[rows].float(), dim=-1).double().cumsum(dim=-1)
        total = cdf[:, -1:]
        target = torch.minimum(draws.to(scores.device).unsqueeze(-1) * total, torch.nextafter(total, torch.zeros_like(total)))
        tokens = torch.searchsorted(cdf, target, right=True).clamp(max=scores.shape[-1] - 1)
        out = scores.clone()
        out[rows] = float("-inf")
        out[rows.unsqueeze(-1), tokens] = 0.0
        return out


def row_seeds(seeds: list[int | None], n: int) -> list[int | None]:
    """Seeds of the ``n`` rows of each prompt: the prompt's seed for the first sample, and seeds
    derived from it (and the sample index) for the others, so a prompt's samples differ."""
    import numpy as np

    rows: list[int | None] = []
    for seed in seeds:
        for j in range(n):
            if seed is None or j == 0:
                rows.append(seed)
            else:
                state = np.random.SeedSequence([seed & 0xFFFFFFFFFFFFFFFF, j]).generate_state(2, dtype=np.uint32)
                rows.append(int(state[0]) << 31 | int(state[1]) >> 1)
    return rows

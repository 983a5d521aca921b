"""A logits processor that records log-probabilities and applies temperature / top-p itself.

Hugging Face ``generate`` warps logits before sampling; a trainer needs the log-probability
of each sampled token under the *unwarped* model. :class:`RecordingProcessor` sees the raw
logits (it is the only processor), keeps one step of log-softmax, reads the token sampled
from it on the next call and then returns the warped scores generate samples from. Memory
stays at one ``(batch, vocab)`` tensor instead of one per generated token.
"""

from __future__ import annotations

import torch


class RecordingProcessor:
    """Record raw log-probs of sampled tokens; warp scores with temperature and top-p.

    Args:
        temperature: divide logits by this before sampling (ignored when greedy).
        top_p: keep the smallest set of tokens whose probability mass reaches ``top_p``.
        greedy: leave the scores as they are (argmax decoding).
    """

    def __init__(self, temperature: float, top_p: float, greedy: bool) -> None:
        self.temperature = temperature
        self.top_p = top_p
        self.greedy = greedy
        self._pending: torch.Tensor | None = None
        self.steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._pending is not None:
            self.collect(input_ids[:, -1])
        self._pending = torch.log_softmax(scores.float(), dim=-1)
        if self.greedy:
            return scores
        warped = scores / self.temperature
        if self.top_p < 1.0:
            sorted_scores, order = torch.sort(warped, descending=True, dim=-1)
            cumulative = torch.softmax(sorted_scores, dim=-1).cumsum(dim=-1)
            drop_sorted = cumulative - torch.softmax(sorted_scores, dim=-1) >= self.top_p
            drop = drop_sorted.scatter(-1, order, drop_sorted)
            warped = warped.masked_fill(drop, float("-inf"))
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
    """Logits processor that samples each row with a generator of its own.

    Put it after :class:`RecordingProcessor` (whose warped scores it samples from). Rows with a
    seed draw their next token from ``torch.multinomial`` with their own ``torch.Generator``
    and hand ``generate`` a one-hot distribution, so what ``generate`` then samples from the
    global RNG cannot change it: a row's tokens depend on its seed and its own logits only,
    never on the other rows of the batch. Rows whose seed is None are left to ``generate``.

    Args:
        seeds: one seed (or None) per row of the batch.
    """

    def __init__(self, seeds: list[int | None]) -> None:
        self.seeds = seeds
        self._generators: list[torch.Generator | None] | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._generators is None:
            self._generators = [None if s is None else torch.Generator(device=scores.device).manual_seed(s)
                                for s in self.seeds]
        probs = torch.softmax(scores.float(), dim=-1)
        out = scores.clone()
        for row, generator in enumerate(self._generators):
            if generator is None:
                continue
            token = torch.multinomial(probs[row], 1, generator=generator)
            out[row] = float("-inf")
            out[row, token] = 0.0
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

"""Ragged prefill: build a batch's KV cache one distinct prompt at a time, without padding.

``generate`` on a left-padded batch runs the prompt's forward pass over ``rows x longest``
positions, padding included, with a padding mask that keeps attention off its fast causal
path. On a CPU the prefill is compute-bound, so that padding is paid in full, and prompts
that are identical (the G rollouts of one task at their first turn) are each computed again.

:func:`ragged_prefill_cache` runs the forward pass once per *distinct* prompt over its real
tokens only (all but the last, which ``generate`` feeds itself), then assembles the
left-padded batch cache that ``generate`` continues from. Real tokens get the positions
``generate`` gives them (0, 1, … from the first real token), so the outputs are those of the
padded batch up to floating-point rounding. The padded cache slots are masked by the
attention mask and never read.
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import torch


def cache_kwarg(model: Any) -> str:
    """The keyword the model's forward/generate take the KV cache under (``cache`` in newer
    ``transformers``, ``past_key_values`` before)."""
    params = inspect.signature(type(model).forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def ragged_prefill_cache(model: Any, rows: Sequence[Sequence[int]], width: int) -> Any | None:
    """A ``DynamicCache`` holding the first ``width - 1`` positions of the left-padded batch.

    ``rows`` are the prompts (token ids, each at most ``width`` long); the cache row of a prompt
    of length ``n`` holds ``width - n`` zero slots, then the keys/values of its first ``n - 1``
    tokens. Returns None when there is nothing to prefill (every prompt is one token) or the
    model's cache does not expose per-layer key/value tensors.
    """
    from transformers import DynamicCache

    if width < 2 or all(len(r) < 2 for r in rows):
        return None
    key = cache_kwarg(model)
    device = next(model.parameters()).device
    distinct: dict[tuple[int, ...], int] = {}
    owner = [distinct.setdefault(tuple(r), len(distinct)) for r in rows]
    layers: list[list[tuple[torch.Tensor, torch.Tensor] | None]] = []
    with torch.no_grad():
        for prompt in distinct:
            if len(prompt) < 2:
                layers.append([])
                continue
            cache = DynamicCache(config=model.config)
            ids = torch.tensor([prompt[:-1]], dtype=torch.long, device=device)
            try:
                model(input_ids=ids, use_cache=True, logits_to_keep=1, **{key: cache})
            except TypeError:  # models without logits_to_keep
                model(input_ids=ids, use_cache=True, **{key: cache})
            kv = getattr(cache, "layers", None)
            if not kv or not all(hasattr(layer, "keys") for layer in kv):
                return None
            layers.append([(layer.keys, layer.values) for layer in kv])
    template = next(entry for entry in layers if entry)
    merged = DynamicCache(config=model.config)
    for index, (k0, v0) in enumerate(template):
        keys, values = [], []
        for row in owner:
            entry = layers[row]
            k, v = entry[index] if entry else (k0[:, :, :0], v0[:, :, :0])
            pad = width - 1 - k.shape[-2]
            keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))
            values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
        merged.update(torch.cat(keys), torch.cat(values), index)
    return merged

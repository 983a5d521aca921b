"""Text spaces for observations and actions.

Gymnasium's default ``Text`` charset is alphanumeric only, so a sentence with a space or a
comma is "outside" it. :class:`NaturalText` samples from a charset that covers natural
language (ASCII punctuation and whitespace, Latin, Greek, Cyrillic and CJK letters) and
accepts any string within its length bounds: an observation may quote whatever an agent
typed, and an action may be anything a model produced.
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces


def _natural_language_charset() -> str:
    ranges = [(0x00A0, 0x024F), (0x0370, 0x03FF), (0x0400, 0x04FF), (0x2010, 0x205E), (0x4E00, 0x4FFF)]
    extra = "".join(chr(c) for lo, hi in ranges for c in range(lo, hi + 1))
    return string.printable + extra


NATURAL_LANGUAGE_CHARSET = _natural_language_charset()
"""Characters :class:`NaturalText` samples from (about 5,000)."""

MAX_OBSERVATION_CHARS = 1_000_000
MAX_ACTION_CHARS = 8_192
"""Longest action the action space contains; longer actions are handled, but marked invalid."""


class NaturalText(spaces.Text):
    """A ``Text`` space over natural-language strings.

    ``contains`` accepts every ``str`` whose length lies within ``[min_length, max_length]``;
    ``sample`` draws from :data:`NATURAL_LANGUAGE_CHARSET`.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=NATURAL_LANGUAGE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"NaturalText({self.min_length}, {self.max_length})"


def observation_space() -> NaturalText:
    """The observation space every env of the suite uses."""
    return NaturalText(MAX_OBSERVATION_CHARS)


def action_space(max_length: int = MAX_ACTION_CHARS) -> NaturalText:
    """The action space of the suite's envs: text of at most ``max_length`` characters (default
    :data:`MAX_ACTION_CHARS`; a tool env with a declared token budget allows :func:`reply_char_limit`)."""
    return NaturalText(max_length)


CHARS_PER_TOKEN_BOUND = 16
"""Characters one generated token is taken to hold at most, when a token budget becomes a length limit."""


def reply_char_limit(max_new_tokens: int | None) -> int:
    """The longest reply an env with a declared budget of ``max_new_tokens`` accepts: the budget at
    :data:`CHARS_PER_TOKEN_BOUND` characters a token (never under :data:`MAX_ACTION_CHARS`), so a reply
    the benchmark's harness would read is not refused for its length."""
    if not max_new_tokens:
        return MAX_ACTION_CHARS
    return max(MAX_ACTION_CHARS, int(max_new_tokens) * CHARS_PER_TOKEN_BOUND)

"""String matching used by the WebShop reward: fuzzy token-set ratio and colour folding.

* :func:`token_set_ratio` gives the score of ``thefuzz.fuzz.token_set_ratio`` (thefuzz 0.19.0,
  WebShop's pin, with its python-Levenshtein backend): both values are turned into text (a pair
  becomes its Python ``str``), Latin-1 characters 128–255 are dropped, every non-word character
  becomes a space, the text is lower-cased and split into a token set; the score is the best
  rounded InDel similarity (0–100) among the sorted intersection and the two sorted
  "intersection + rest" strings. The InDel distance comes from ``rapidfuzz``.
* :func:`normalize_color` folds a colour option onto the first entry of WebShop's colour list that
  it contains ("navy blue" -> "blue", since "blue" comes before "navy" in that list). Like
  upstream it also takes a ``(name, value)`` pair, which it folds only when one element *is* a
  listed colour.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz.distance import Indel

_LATIN1_HIGH = {code: None for code in range(128, 256)}
_NON_WORD = re.compile(r"(?ui)\W")


def process_text(value: Any) -> str:
    """thefuzz's ``full_process(value, force_ascii=True)``: the comparable form of a value."""
    text = value if isinstance(value, str) else str(value)
    return _NON_WORD.sub(" ", text.translate(_LATIN1_HIGH)).lower().strip()


def _ratio(first: str, second: str) -> int:
    if not first or not second:
        return 0
    total = len(first) + len(second)
    return int(round(100 * ((total - Indel.distance(first, second)) / total)))


def token_set_ratio(first: Any, second: Any) -> int:
    """Token-set similarity of two values in [0, 100], as WebShop's reward computes it."""
    processed_a, processed_b = process_text(first), process_text(second)
    if not processed_a or not processed_b:
        return 0
    tokens_a, tokens_b = set(processed_a.split()), set(processed_b.split())
    common = " ".join(sorted(tokens_a & tokens_b))
    with_a = (common + " " + " ".join(sorted(tokens_a - tokens_b))).strip()
    with_b = (common + " " + " ".join(sorted(tokens_b - tokens_a))).strip()
    return max(_ratio(common, with_a), _ratio(common, with_b), _ratio(with_a, with_b))


COLOR_NAMES: tuple[str, ...] = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue",
    "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne",
    "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral",
    "cranberry", "cream", "crystal", "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia",
    "gold", "granite", "grape", "graphite", "grass", "gray", "green", "grey", "heather", "indigo",
    "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light", "lilac", "lime", "magenta",
    "maroon", "mauve", "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom", "mustard",
    "natural", "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum", "purple",
    "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver", "skull",
    "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal", "tiger", "turquoise",
    "violet", "walnut", "wheat", "white", "wine", "yellow",
)
"""WebShop's base colour names, in its order (folding takes the first one found)."""


def normalize_color(value: Any) -> Any:
    """The first base colour ``value`` contains (substring of a text, element of a pair), else ``value``."""
    for color in COLOR_NAMES:
        if color in value:
            return color
    return value

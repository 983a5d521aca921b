"""String matching used by the WebShop reward: fuzzy token-set ratio, colour folding, noun sets.

* :func:`token_set_ratio` reproduces the score of ``thefuzz.fuzz.token_set_ratio`` (0–100,
  rounded to an int; both strings lower-cased, non-alphanumerics turned into spaces) from its
  definition over normalised InDel similarity, so the reward needs no extra package.
* :func:`normalize_color` folds colour variants ("navy blue", "light-grey") onto a base colour
  name, as WebShop does before comparing options.
* :func:`type_nouns` is a POS-free stand-in for the spaCy noun extraction WebShop runs on product
  names for the product-type factor: it keeps the content words of a name and drops stop words,
  adjectives of common shopping vocabulary, colours, numbers and units. It runs at catalogue
  preparation time (see :mod:`agentgym_suite.envs.webshop.prepare`).
"""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def _process(text: str) -> str:
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def _lcs_length(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for char_a in a:
        current = [0]
        for j, char_b in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if char_a == char_b else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _indel_distance(a: str, b: str) -> int:
    return len(a) + len(b) - 2 * _lcs_length(a, b)


def token_set_ratio(first: str, second: str) -> int:
    """Token-set similarity of two strings in [0, 100] (``thefuzz`` semantics)."""
    tokens_a = set(_process(first).split())
    tokens_b = set(_process(second).split())
    if not tokens_a or not tokens_b:
        return 0
    common = tokens_a & tokens_b
    only_a = tokens_a - tokens_b
    only_b = tokens_b - tokens_a
    if common and (not only_a or not only_b):
        return 100
    joined_a = " ".join(sorted(only_a))
    joined_b = " ".join(sorted(only_b))
    common_len = len(" ".join(sorted(common)))
    sep = 1 if common_len else 0
    with_a = common_len + sep + len(joined_a)
    with_b = common_len + sep + len(joined_b)
    total = with_a + with_b
    best = 100.0 - 100.0 * _indel_distance(joined_a, joined_b) / total if total else 0.0
    if common_len:
        best = max(
            best,
            100.0 - 100.0 * (sep + len(joined_a)) / (common_len + with_a),
            100.0 - 100.0 * (sep + len(joined_b)) / (common_len + with_b),
        )
    return int(round(best))


COLOR_NAMES: tuple[str, ...] = (
    "alabaster", "apricot", "aqua", "ash", "azure", "beige", "black", "blue", "blush", "bronze",
    "brown", "burgundy", "camel", "caramel", "champagne", "charcoal", "cherry", "chocolate", "clear",
    "coffee", "copper", "coral", "cream", "emerald", "fuchsia", "gold", "gray", "green", "grey",
    "indigo", "ivory", "khaki", "lavender", "lemon", "lilac", "lime", "magenta", "maroon", "mint",
    "mocha", "multi", "mustard", "natural", "navy", "nude", "olive", "orange", "peach", "pink",
    "plum", "purple", "red", "rose", "rust", "sage", "salmon", "sand", "silver", "tan", "taupe",
    "teal", "turquoise", "violet", "white", "wine", "yellow",
)
"""Base colour names options are folded onto (longest names are tried first)."""

_COLORS_LONGEST_FIRST = sorted(COLOR_NAMES, key=len, reverse=True)


def normalize_color(value: str) -> str:
    """Return the first base colour named inside ``value``, else ``value`` unchanged."""
    for color in _COLORS_LONGEST_FIRST:
        if color in value:
            return color
    return value


_STOP_WORDS = frozenset(
    """a an and are as at be by for from in into is it its of on or per the to with without x
    pack count piece pieces set sets inch inches oz ounce ounces fl lb lbs pound pounds ml l g kg mg
    cm mm ft feet foot size sizes new best great premium high quality natural organic free
    extra super ultra mini small medium large big long short wide soft hard light heavy dark deep
    pure fresh easy quick all plus pro men mens women womens woman man kids kid boys girls baby
    unisex adult adults compatible professional portable durable waterproof lightweight
    comfortable cute classic modern vintage casual luxury perfect non""".split()
)


def type_nouns(name: str) -> list[str]:
    """Content words of a product name, used as its "type" nouns (sorted, unique)."""
    words = re.findall(r"[a-z][a-z']*", name.lower())
    keep = {
        word.strip("'")
        for word in words
        if len(word) > 2 and word not in _STOP_WORDS and word not in COLOR_NAMES and not word.endswith("'s")
    }
    keep.discard("")
    return sorted(keep)

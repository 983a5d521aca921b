"""Data preparation for WebShop: the product-type nouns the reward needs, computed once per catalogue.

Upstream tags both product names on every purchase. Every goal's name is a catalogue product's
name, so here each distinct name is tagged once per catalogue and tagger and stored as JSON
(name -> nouns) in ``$AGENTGYM_CACHE/webshop/product_nouns-<tagger>-<digest>.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agentgym_suite.core.data import cache_dir
from agentgym_suite.envs.webshop.nouns import NounTagger


def _digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(names))).encode("utf-8")).hexdigest()[:16]


def load_or_prepare_nouns(products: list[dict[str, Any]], tagger: NounTagger) -> dict[str, list[str]]:
    """Name -> type nouns for every product name: from the cache, or tagged and cached."""
    names = [p["name"] for p in products]
    tag = re.sub(r"[^0-9A-Za-z.]+", "_", tagger.name)
    cached = cache_dir() / "webshop" / f"product_nouns-{tag}-{_digest(names)}.json"
    if cached.exists():
        try:
            with cached.open(encoding="utf-8") as handle:
                nouns = json.load(handle)
            if all(name in nouns for name in names):
                return nouns
        except (OSError, json.JSONDecodeError):
            pass
    nouns = tagger.nouns(names)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{id(nouns)}")
        tmp.write_text(json.dumps(nouns), encoding="utf-8")
        tmp.replace(cached)
    except OSError:
        pass  # a read-only cache only costs recomputation next time
    return nouns

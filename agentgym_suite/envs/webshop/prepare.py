"""Data preparation for WebShop: the product-type noun sets the reward needs.

WebShop's type factor compares the nouns of the purchased product's name with those of the goal
product's name, which upstream extracts with a spaCy model on every purchase. Here the noun sets
are computed once per catalogue and stored as JSON (name -> nouns):

* ``<data_dir>/product_nouns.json`` when a prepared file ships with the data, else
* ``$AGENTGYM_CACHE/webshop/product_nouns-<digest>.json``, written on first load.

:func:`prepare_nouns` computes them with the POS-free heuristic of
:func:`~agentgym_suite.envs.webshop.text_match.type_nouns`, or with spaCy when ``use_spacy=True``
and a spaCy English model is installed (optional; nothing needs spaCy at run time).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from agentgym_suite.core.data import cache_dir
from agentgym_suite.envs.webshop.text_match import type_nouns

NOUN_FILE = "product_nouns.json"


def _spacy_nouns(names: list[str], model: str) -> dict[str, list[str]]:
    try:
        import spacy  # noqa: PLC0415 - optional, preparation only
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("use_spacy=True needs spaCy: pip install spacy && python -m spacy download en_core_web_sm") from err
    nlp = spacy.load(model)
    return {
        name: sorted({t.text.lower() for t in doc if t.pos_ in ("NOUN", "PROPN")})
        for name, doc in zip(names, nlp.pipe(names))
    }


def prepare_nouns(names: Iterable[str], *, use_spacy: bool = False, spacy_model: str = "en_core_web_sm") -> dict[str, list[str]]:
    """Return name -> type nouns for every distinct product name."""
    unique = sorted(set(names))
    if use_spacy:
        return _spacy_nouns(unique, spacy_model)
    return {name: type_nouns(name) for name in unique}


def _digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(names))).encode("utf-8")).hexdigest()[:16]


def load_or_prepare_nouns(data_dir: Path, products: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Noun sets for ``products``: the data dir's prepared file, the cache, or computed and cached."""
    names = [p["name"] for p in products]
    shipped = Path(data_dir) / NOUN_FILE
    if shipped.exists():
        with shipped.open(encoding="utf-8") as handle:
            nouns = json.load(handle)
        if all(name in nouns for name in names):
            return nouns
    cached = cache_dir() / "webshop" / f"product_nouns-{_digest(names)}.json"
    if cached.exists():
        try:
            with cached.open(encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, json.JSONDecodeError):
            pass
    nouns = prepare_nouns(names)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".tmp{id(nouns)}")
        tmp.write_text(json.dumps(nouns), encoding="utf-8")
        tmp.replace(cached)
    except OSError:
        pass  # a read-only cache only costs recomputation next time
    return nouns

"""Loading WebShop's product catalogue and building its goals.

Reads the official files (``items_shuffle_1000.json`` — or any catalogue in that format —,
``items_ins_v2_1000.json`` and ``items_human_ins.json``; an optional ``reviews.json``) and turns
them into the same product records and goals WebShop's engine builds:

* products get ``Title``, ``Description``, ``BulletPoints``, ``Price``/``pricing``, lower-cased
  ``options`` (``/`` becomes `` | ``), ``Attributes`` (``DUMMY_ATTR`` when none) and
  ``Reviews``/``Rating``; products with a bad or repeated ASIN are skipped;
* each product's price is drawn uniformly inside its price range;
* human goals come from the human instruction file, synthetic goals from the attribute file
  (one goal per option combination); the goal's price bound is a random 10-dollar step a little
  above the product's price, and the goal list is shuffled with WebShop's seed (233).

Unlike upstream (which draws prices and bounds from the unseeded global RNG) every draw here
comes from generators seeded with ``seed``, so the task list is the same on every machine.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from agentgym_suite.core.errors import DataNotFoundError

CATALOGUE_FILE = "items_shuffle_1000.json"
ATTRIBUTE_FILE = "items_ins_v2_1000.json"
HUMAN_GOAL_FILE = "items_human_ins.json"
REVIEW_FILE = "reviews.json"
SHUFFLE_SEED = 233
PRICE_STEPS = [10.0 * i for i in range(1, 100)]
NO_PRICE_LIMIT = 1_000_000.0
SPLITS: dict[str, tuple[int, int | None]] = {"test": (0, 500), "eval": (500, 1500), "train": (1500, None), "all": (0, None)}
"""WebShop's goal index ranges per split (test = the first 500 shuffled goals)."""


@dataclass
class Catalogue:
    """Products, prices and goals of one WebShop data directory."""

    products: list[dict[str, Any]]
    by_asin: dict[str, dict[str, Any]]
    prices: dict[str, float]
    goals: list[dict[str, Any]]
    source: Path
    nouns: dict[str, list[str]] = field(default_factory=dict)
    """Product name -> its type nouns, repeats kept (see :mod:`agentgym_suite.envs.webshop.nouns`)."""
    noun_tagger: str = ""
    """Which tagger found ``nouns`` (``spacy-<version>/<model>`` or ``heuristic``)."""


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _parse_pricing(raw: Any) -> tuple[list[float], str]:
    if isinstance(raw, (list, tuple)) and raw:
        values = [float(v) for v in raw[:2]]
    elif isinstance(raw, str) and "$" in raw:
        values = []
        for chunk in raw.split("$")[1:]:
            digits = re.sub(r"[^\d.]", "", chunk)
            try:
                values.append(float(Decimal(digits)))
            except InvalidOperation:
                continue
        values = values[:2]
    else:
        values = []
    if not values:
        return [100.0], "$100.0"
    if len(values) == 1:
        return values, f"${values[0]}"
    return values, f"${values[0]} to ${values[1]}"


def _clean_product(raw: dict[str, Any], attributes: dict[str, Any], reviews: dict[str, Any]) -> dict[str, Any]:
    asin = str(raw["asin"])
    product = dict(raw)
    product["asin"] = asin
    product["category"] = raw.get("category", "")
    product["query"] = str(raw.get("query", "")).lower().strip()
    product["product_category"] = raw.get("product_category", "")
    product["name"] = raw.get("name", "")
    product["Title"] = raw.get("name", "")
    product["Description"] = raw.get("full_description") or ""
    bullets = raw.get("small_description") or []
    product["BulletPoints"] = bullets if isinstance(bullets, list) else [bullets]
    pricing, price_tag = _parse_pricing(raw.get("pricing"))
    product["pricing"] = pricing
    product["Price"] = price_tag
    options: dict[str, list[str]] = {}
    for option_name, contents in (raw.get("customization_options") or {}).items():
        if not contents:
            continue
        options[option_name.lower()] = [
            str(item["value"]).strip().replace("/", " | ").lower() for item in contents if "value" in item
        ]
    product["options"] = options
    entry = attributes.get(asin) or {}
    product["Attributes"] = entry.get("attributes") or ["DUMMY_ATTR"]
    product["instruction_text"] = entry.get("instruction")
    product["instruction_attributes"] = entry.get("instruction_attributes")
    review = reviews.get(asin) or {}
    product["Reviews"] = [
        {
            "title": r.get("title", ""),
            "score": r.get("score", r.get("stars", "")),
            "body": r.get("body", r.get("review", "")),
        }
        for r in review.get("reviews", [])
    ]
    product["Rating"] = review.get("average_rating", "N.A.")
    return product


def _product_prices(products: list[dict[str, Any]], rng: random.Random) -> dict[str, float]:
    prices = {}
    for product in products:
        pricing = product["pricing"]
        prices[product["asin"]] = pricing[0] if len(pricing) == 1 else rng.uniform(*pricing[:2])
    return prices


def _price_bound(price: float, rng: random.Random) -> tuple[float, str]:
    candidates = [p for p in PRICE_STEPS if p > price][:4]
    if len(candidates) < 2:
        return NO_PRICE_LIMIT, ""
    upper = sorted(rng.sample(candidates, 2))[1]
    return upper, f", and price lower than {upper:.2f} dollars"


def _goal(product: dict[str, Any], text: str, attributes: list[str], options: Any, bound: tuple[float, str]) -> dict[str, Any]:
    return {
        "asin": product["asin"],
        "category": product["category"],
        "query": product["query"],
        "name": product["name"],
        "product_category": product["product_category"],
        "instruction_text": text + bound[1],
        "attributes": list(attributes),
        "price_upper": bound[0],
        "goal_options": options,
    }


def human_goals(products: list[dict[str, Any]], prices: dict[str, float], human: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Goals from human-written instructions (WebShop's default), in catalogue order."""
    goals = []
    for product in products:
        for entry in human.get(product["asin"], []):
            attributes = entry.get("instruction_attributes") or []
            if not attributes:
                continue
            bound = _price_bound(prices[product["asin"]], rng)
            text = str(entry["instruction"]).strip(".")
            options = entry.get("instruction_options") or []
            options = dict(options) if isinstance(options, dict) else list(options)
            goals.append(_goal(product, text, attributes, options, bound))
    return goals


def synthetic_goals(products: list[dict[str, Any]], prices: dict[str, float], rng: random.Random) -> list[dict[str, Any]]:
    """Goals from the attribute file's templated instructions, one per option combination."""
    goals = []
    for product in products:
        if not product.get("instruction_text") or not product.get("instruction_attributes"):
            continue
        bound = _price_bound(prices[product["asin"]], rng)
        names = sorted(product["options"])
        for combination in itertools.product(*(product["options"][n] for n in names)):
            chosen = dict(zip(names, combination))
            option_text = ", and ".join(f"{k}: {v}" for k, v in chosen.items())
            text = product["instruction_text"] + (f" with {option_text}" if option_text else "")
            goal = _goal(product, text, product["instruction_attributes"], chosen, (bound[0], ""))
            goal["instruction_text"] += bound[1]
            goal["name"] = product["Title"]
            goals.append(goal)
    return goals


def load_catalogue(data_dir: Path, *, goals: str = "human", seed: int = SHUFFLE_SEED, num_products: int | None = None) -> Catalogue:
    """Load a WebShop data directory and build its shuffled goal list.

    Raises:
        DataNotFoundError: when the catalogue or a goal file is missing.
    """
    data_dir = Path(data_dir)
    needed = [CATALOGUE_FILE, ATTRIBUTE_FILE] + ([HUMAN_GOAL_FILE] if goals == "human" else [])
    missing = [name for name in needed if not (data_dir / name).exists()]
    if missing:
        raise DataNotFoundError(
            f"WebShop data not found: missing {', '.join(str(data_dir / m) for m in missing)}. "
            "Set AGENTGYM_DATA to a directory that holds 'webshop/data/' with the official files, "
            "run `agentgym data fetch webshop` to download them, or pass data_dir= pointing at a "
            "catalogue in WebShop's format."
        )
    if goals not in ("human", "synthetic"):
        raise ValueError(f"goals={goals!r}; choose 'human' or 'synthetic'.")
    raw_products = _read_json(data_dir / CATALOGUE_FILE)
    if num_products is not None:
        raw_products = raw_products[:num_products]
    attributes = _read_json(data_dir / ATTRIBUTE_FILE)
    reviews_path = data_dir / REVIEW_FILE
    reviews = {r["asin"]: r for r in _read_json(reviews_path)} if reviews_path.exists() else {}
    products, seen = [], set()
    for raw in raw_products:
        asin = str(raw.get("asin", "nan"))
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(_clean_product(raw, attributes, reviews))
    rng = random.Random(seed)
    prices = _product_prices(products, rng)
    if goals == "human":
        goal_list = human_goals(products, prices, _read_json(data_dir / HUMAN_GOAL_FILE), rng)
    else:
        goal_list = synthetic_goals(products, prices, rng)
    random.Random(SHUFFLE_SEED).shuffle(goal_list)
    return Catalogue(products, {p["asin"]: p for p in products}, prices, goal_list, data_dir)


def split_goals(count: int, split: str) -> list[int]:
    """Goal indexes of ``split`` (``test``, ``eval``, ``train`` or ``all``) among ``count`` goals."""
    if split not in SPLITS:
        raise ValueError(f"split={split!r}; choose one of {sorted(SPLITS)}.")
    start, stop = SPLITS[split]
    return list(range(count))[start:stop]

"""WebShop's purchase reward.

``reward = (attribute matches + option matches + price ok) / (#goal attributes + #goal options + 1)``
times the product-type factor ``r_type``:

* an attribute matches when a product attribute has token-set ratio > 85 with it, or it occurs
  in the title, features or description;
* a chosen option matches a goal option exactly (``size``) or with ratio > 85 (others, after
  colour folding), or when it occurs in the title, features or description;
* the price is ok when the product's price is at most the goal's bound;
* ``r_type`` is 1.0 when the search query, two categories of the category path or more than 20 %
  of the goal name's nouns match; 0.5 when none of them does; 0.1 when under 10 % of the nouns
  match and 0.0 when none does.

The total is clamped to 1.0 (upstream could exceed 1 when several chosen options match the same
goal option).
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.envs.webshop.text_match import normalize_color, token_set_ratio

EXACT_MATCH_OPTIONS = ("size",)
FUZZY_THRESHOLD = 85


def _product_text(product: dict[str, Any]) -> tuple[str, str, str]:
    return product["Title"].lower(), " ".join(product["BulletPoints"]).lower(), product["Description"].lower()


def type_reward(product: dict[str, Any], goal: dict[str, Any], nouns: dict[str, list[str]]) -> dict[str, Any]:
    """The product-type factor and its parts (``r_type``, ``query_match``, ``category_match``, ``title_score``)."""
    query_match = product["query"] == goal["query"]
    bought_path = {x.strip() for x in product["product_category"].split("›")}
    goal_path = {x.strip() for x in goal["product_category"].split("›")}
    category_match = len(bought_path & goal_path) >= 2
    bought_nouns = set(nouns.get(product["name"], []))
    goal_nouns = set(nouns.get(goal["name"], []))
    title_score = len(bought_nouns & goal_nouns) / len(goal_nouns) if goal_nouns else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {"r_type": r_type, "query_match": query_match, "category_match": category_match, "title_score": title_score}


def attribute_matches(product: dict[str, Any], goal_attributes: list[str]) -> int:
    """How many goal attributes the product has."""
    title, bullets, description = _product_text(product)
    count = 0
    for wanted in goal_attributes:
        if any(token_set_ratio(have, wanted) > FUZZY_THRESHOLD for have in product["Attributes"]):
            count += 1
        elif wanted in title or wanted in bullets or wanted in description:
            count += 1
    return count


def option_matches(product: dict[str, Any], goal_options: list[str], chosen: dict[str, str]) -> int:
    """How many chosen options match a goal option."""
    title, bullets, description = _product_text(product)
    wanted = [normalize_color(o) for o in goal_options]
    count = 0
    for name, value in chosen.items():
        value = normalize_color(value)
        if name.lower() in EXACT_MATCH_OPTIONS:
            matched = value in wanted
        else:
            matched = any(token_set_ratio(g, value) > FUZZY_THRESHOLD for g in wanted)
        if matched or value in title or value in bullets or value in description:
            count += 1
    return count


def goal_option_values(goal: dict[str, Any]) -> list[str]:
    """The goal's option values (human goals list them; synthetic goals map name -> value)."""
    options = goal["goal_options"]
    return list(options.values()) if isinstance(options, dict) else list(options)


def purchase_reward(
    product: dict[str, Any], goal: dict[str, Any], price: float, chosen: dict[str, str], nouns: dict[str, list[str]]
) -> tuple[float, dict[str, Any]]:
    """Return WebShop's reward for buying ``product`` with options ``chosen`` at ``price``, and its parts."""
    type_parts = type_reward(product, goal, nouns)
    wanted_options = goal_option_values(goal)
    price_ok = price <= goal["price_upper"]
    n_attr = attribute_matches(product, goal["attributes"])
    n_opt = option_matches(product, wanted_options, chosen)
    denominator = len(goal["attributes"]) + len(wanted_options) + 1
    total = min(1.0, (n_attr + n_opt + float(price_ok)) / denominator * type_parts["r_type"])
    parts = dict(type_parts)
    parts.update(
        attribute_matches=n_attr, option_matches=n_opt, price_ok=price_ok,
        r_att=n_attr / len(goal["attributes"]) if goal["attributes"] else 0.0,
        r_option=n_opt / len(wanted_options) if wanted_options else None,
    )
    return total, parts

"""WebShop's purchase reward, as upstream's ``web_agent_site/engine/goal.py::get_reward`` scores it.

``reward = (attribute matches + option matches + price ok) / (#goal attributes + #goal options + 1) * r_type``

* attributes: a goal attribute matches when some product attribute has token-set ratio > 85 with
  it, or when it occurs in the lower-cased title, features or description;
* options: each **goal** option counts once when some chosen option value has token-set ratio > 85
  with it, both sides colour-folded first; there is no exact rule for sizes and no title or
  description fallback. A synthetic goal keeps its options as a name -> value mapping, and
  upstream compares its ``(name, value)`` pairs, so the option name takes part in the match;
* price: the price paid is at most the goal's bound;
* ``r_type`` from the nouns of the two product names (see :mod:`.nouns`), the search query and
  the category path: 1.0, 0.5 when neither query, two category levels nor over 20 % of the goal's
  nouns match, 0.1 under 10 % of the nouns and 0.0 for none.

``tests/conformance/webshop`` checks this against upstream's outputs on fixed product/goal pairs.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentgym_suite.envs.webshop.text_match import normalize_color, token_set_ratio

FUZZY_THRESHOLD = 85


def type_reward(product: dict[str, Any], goal: dict[str, Any], nouns: Mapping[str, list[str]]) -> dict[str, Any]:
    """The product-type factor and its parts (``r_type``, ``query_match``, ``category_match``, ``title_score``).

    ``nouns`` maps a product name to its type nouns, repeats kept (:func:`.nouns.load_tagger`).
    """
    query_match = product["query"] == goal["query"]
    bought_path = {x.strip() for x in product["product_category"].split("›")}
    goal_path = {x.strip() for x in goal["product_category"].split("›")}
    category_match = len(bought_path & goal_path) >= 2
    bought_nouns = nouns[product["name"]]
    goal_nouns = nouns[goal["name"]]
    title_score = len(set(bought_nouns) & set(goal_nouns)) / len(goal_nouns) if goal_nouns else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {"r_type": r_type, "query_match": query_match, "category_match": category_match, "title_score": title_score}


def attribute_matches(product: dict[str, Any], goal_attributes: list[str]) -> int:
    """How many goal attributes the product has (its attribute list, else its texts)."""
    texts = (product["Title"].lower(), " ".join(product["BulletPoints"]).lower(), product["Description"].lower())
    count = 0
    for wanted in goal_attributes:
        if any(token_set_ratio(have, wanted) > FUZZY_THRESHOLD for have in product["Attributes"]):
            count += 1
        elif any(wanted in text for text in texts):
            count += 1
    return count


def goal_option_items(goal: dict[str, Any]) -> list[Any]:
    """What each goal option is compared as: a value (human goals) or a ``(name, value)`` pair (synthetic)."""
    options = goal["goal_options"]
    return list(options.items()) if isinstance(options, dict) else list(options)


def goal_option_values(goal: dict[str, Any]) -> list[str]:
    """The goal's option values (human goals list them; synthetic goals map name -> value)."""
    options = goal["goal_options"]
    return list(options.values()) if isinstance(options, dict) else list(options)


def option_matches(chosen_values: list[str], goal_options: list[Any]) -> int:
    """How many goal options some chosen value matches (token-set ratio > 85 after colour folding)."""
    chosen = [normalize_color(value) for value in chosen_values]
    wanted = [normalize_color(option) for option in goal_options]
    return sum(1 for goal_option in wanted if any(token_set_ratio(value, goal_option) > FUZZY_THRESHOLD for value in chosen))


def purchase_reward(
    product: dict[str, Any], goal: dict[str, Any], price: float, chosen: dict[str, str], nouns: Mapping[str, list[str]]
) -> tuple[float, dict[str, Any]]:
    """Return WebShop's reward for buying ``product`` with options ``chosen`` at ``price``, and its parts."""
    type_parts = type_reward(product, goal, nouns)
    goal_options = goal_option_items(goal)
    price_ok = price <= goal["price_upper"]
    n_attr = attribute_matches(product, goal["attributes"])
    n_opt = option_matches(list(chosen.values()), goal_options)
    denominator = len(goal["attributes"]) + len(goal_options) + 1
    total = (n_attr + n_opt + int(price_ok)) / denominator * type_parts["r_type"]
    parts = dict(type_parts)
    parts.update(
        attribute_matches=n_attr, option_matches=n_opt, price_ok=price_ok,
        r_att=n_attr / len(goal["attributes"]) if goal["attributes"] else 0.0,
        r_option=n_opt / len(goal_options) if goal_options else None,
    )
    return total, parts

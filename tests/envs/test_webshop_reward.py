"""WebShop's reward function against hand-computed cases."""

from __future__ import annotations

from typing import Any

import pytest

from agentgym_suite.envs.webshop.reward import purchase_reward, type_reward
from agentgym_suite.envs.webshop.text_match import normalize_color, token_set_ratio, type_nouns


def product(**changes: Any) -> dict[str, Any]:
    base = {
        "asin": "B000000001",
        "name": "Mossfield Herbal Shampoo Bottle",
        "Title": "Mossfield Herbal Shampoo Bottle",
        "query": "shampoo",
        "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
        "Attributes": ["paraben free", "natural ingredients"],
        "BulletPoints": ["gentle every day"],
        "Description": "a gentle wash",
    }
    base.update(changes)
    return base


def goal(**changes: Any) -> dict[str, Any]:
    base = {
        "asin": "B000000001",
        "name": "Mossfield Herbal Shampoo Bottle",
        "query": "shampoo",
        "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
        "attributes": ["paraben free", "natural ingredient"],
        "goal_options": ["lavender", "16 fl oz"],
        "price_upper": 30.0,
    }
    base.update(changes)
    return base


NOUNS = {
    "Mossfield Herbal Shampoo Bottle": ["bottle", "herbal", "mossfield", "shampoo"],
    "Brindle Oak Desk Lamp": ["brindle", "desk", "lamp", "oak"],
    "Aurelle Mossfield Serum Jar Kit": ["aurelle", "jar", "kit", "mossfield", "serum"],
}
FULL_OPTIONS = {"scent": "lavender", "size": "16 fl oz"}


def test_full_match_is_one() -> None:
    score, parts = purchase_reward(product(), goal(), 20.0, FULL_OPTIONS, NOUNS)
    # (2 attributes + 2 options + price) / (2 + 2 + 1) * 1.0; "natural ingredient" matches fuzzily
    assert score == 1.0
    assert parts["attribute_matches"] == 2 and parts["option_matches"] == 2 and parts["price_ok"]


def test_missing_option_costs_one_fifth() -> None:
    score, parts = purchase_reward(product(), goal(), 20.0, {"scent": "lavender"}, NOUNS)
    assert score == pytest.approx(4 / 5) and parts["r_option"] == 0.5


def test_wrong_size_needs_exact_match() -> None:
    score, _ = purchase_reward(product(), goal(), 20.0, {"scent": "lavender", "size": "16 fl oz pack"}, NOUNS)
    assert score == pytest.approx(4 / 5)


def test_option_found_in_title_counts() -> None:
    titled = product(Title="Mossfield Herbal Shampoo Bottle, Coconut")
    score, _ = purchase_reward(titled, goal(), 20.0, {"scent": "coconut", "size": "16 fl oz"}, NOUNS)
    assert score == 1.0


def test_wrong_price_costs_one_fifth() -> None:
    score, parts = purchase_reward(product(), goal(), 45.0, FULL_OPTIONS, NOUNS)
    assert score == pytest.approx(4 / 5) and not parts["price_ok"]


def test_missing_attribute_and_option() -> None:
    bare = product(Attributes=["paraben free"])
    score, _ = purchase_reward(bare, goal(), 20.0, {"size": "16 fl oz"}, NOUNS)
    assert score == pytest.approx(3 / 5)


def test_attribute_found_in_description_counts() -> None:
    described = product(Attributes=["DUMMY_ATTR"], Description="paraben free and made of natural ingredient blends")
    score, _ = purchase_reward(described, goal(), 20.0, FULL_OPTIONS, NOUNS)
    assert score == 1.0


def test_wrong_type_scores_zero() -> None:
    lamp = product(name="Brindle Oak Desk Lamp", Title="Brindle Oak Desk Lamp", query="desk lamp",
                   product_category="Home & Kitchen › Lighting › Desk Lamp")
    score, parts = purchase_reward(lamp, goal(), 20.0, FULL_OPTIONS, NOUNS)
    assert score == 0.0 and parts["r_type"] == 0.0 and parts["title_score"] == 0.0


def test_partial_type_match_halves_reward() -> None:
    kit = product(name="Aurelle Mossfield Serum Jar Kit", query="face serum",
                  product_category="Beauty & Personal Care › Skin Care › Serum")
    parts = type_reward(kit, goal(product_category="Health › Hair Care"), NOUNS)
    # one shared noun out of the goal's four: 0.25 > 0.2, so the type still counts fully
    assert parts["title_score"] == 0.25 and parts["r_type"] == 1.0
    weak_goal = goal(name="Aurelle Serum Jar Kit Mossfield Set", query="face serum", product_category="Health › Hair Care")
    nouns = dict(NOUNS, **{"Aurelle Serum Jar Kit Mossfield Set": ["aurelle", "jar", "kit", "mossfield", "serum", "set"]})
    parts = type_reward(product(), weak_goal, nouns)
    # one of six nouns (1/6 ≈ 0.17): no query, category or title match -> 0.5
    assert parts["r_type"] == 0.5
    score, _ = purchase_reward(product(), weak_goal, 20.0, FULL_OPTIONS, nouns)
    assert score == pytest.approx(0.5)


def test_query_match_keeps_type_when_nouns_overlap_little() -> None:
    same_query = goal(name="Aurelle Serum Jar Kit Mossfield Set", product_category="Other › Things")
    nouns = dict(NOUNS, **{"Aurelle Serum Jar Kit Mossfield Set": ["aurelle", "jar", "kit", "mossfield", "serum", "set"]})
    assert type_reward(product(), same_query, nouns)["r_type"] == 1.0


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("fuzzy was a bear", "fuzzy fuzzy was a bear", 100),
        ("tea tree", "Tea-Tree oil", 100),
        ("natural ingredients", "natural ingredient", 97),
        ("high quality", "quality materials", 74),
        ("", "anything", 0),
    ],
)
def test_token_set_ratio_matches_reference_values(first: str, second: str, expected: int) -> None:
    assert token_set_ratio(first, second) == expected


def test_colour_folding_and_nouns() -> None:
    assert normalize_color("heather grey") == "grey"
    assert normalize_color("16 fl oz") == "16 fl oz"
    assert type_nouns("Trevan Classic Hoodie, Navy Blue, 2 Pack") == ["hoodie", "trevan"]

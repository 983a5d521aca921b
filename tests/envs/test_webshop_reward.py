"""WebShop's reward on small named cases, with the values upstream's ``get_reward`` gives for them.

Every number here is what princeton-nlp/WebShop's ``web_agent_site/engine/goal.py`` (commit
64fa2a5) returned on the same pair; the pairs are the ``unit_test`` cases of
``tests/conformance/webshop/cases.json`` and their outputs are in ``expected_rewards.json``
(``regenerate_webshop_rewards.py``). The fuzzy-ratio and colour values are thefuzz 0.19.0's and
WebShop's ``normalize_color``'s on the same strings.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentgym_suite.envs.webshop.nouns import HeuristicNounTagger, load_tagger
from agentgym_suite.envs.webshop.reward import option_matches, purchase_reward, type_reward
from agentgym_suite.envs.webshop.text_match import normalize_color, token_set_ratio


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


NAMES = ["Mossfield Herbal Shampoo Bottle", "Brindle Oak Desk Lamp", "Aurelle Mossfield Serum Jar Kit",
         "Aurelle Serum Jar Kit Mossfield Set"]
FULL_OPTIONS = {"scent": "lavender", "size": "16 fl oz"}


@pytest.fixture(scope="module")
def nouns() -> dict[str, list[str]]:
    return load_tagger("spacy").nouns(NAMES)


def test_spacy_nouns_are_upstreams(nouns: dict[str, list[str]]) -> None:
    assert nouns["Mossfield Herbal Shampoo Bottle"] == ["mossfield", "herbal", "shampoo", "bottle"]
    assert nouns["Aurelle Serum Jar Kit Mossfield Set"] == ["aurelle", "serum", "jar", "kit", "mossfield", "set"]


def test_full_match_is_one(nouns: dict[str, list[str]]) -> None:
    score, parts = purchase_reward(product(), goal(), 20.0, FULL_OPTIONS, nouns)
    # (2 attributes + 2 options + price) / (2 + 2 + 1) * 1.0; "natural ingredient" matches fuzzily
    assert score == 1.0
    assert parts["attribute_matches"] == 2 and parts["option_matches"] == 2 and parts["price_ok"]


def test_missing_option_costs_one_fifth(nouns: dict[str, list[str]]) -> None:
    score, parts = purchase_reward(product(), goal(), 20.0, {"scent": "lavender"}, nouns)
    assert score == pytest.approx(0.8) and parts["r_option"] == 0.5


def test_size_with_an_extra_word_still_matches(nouns: dict[str, list[str]]) -> None:
    # upstream has no exact rule for sizes: "16 fl oz" is a token subset of "16 fl oz pack" (ratio 100)
    score, _ = purchase_reward(product(), goal(), 20.0, {"scent": "lavender", "size": "16 fl oz pack"}, nouns)
    assert score == 1.0


def test_option_named_only_in_the_title_does_not_count(nouns: dict[str, list[str]]) -> None:
    titled = product(Title="Mossfield Herbal Shampoo Bottle, Coconut")
    score, parts = purchase_reward(titled, goal(), 20.0, {"scent": "coconut", "size": "16 fl oz"}, nouns)
    assert score == pytest.approx(0.8) and parts["option_matches"] == 1


def test_wrong_price_costs_one_fifth(nouns: dict[str, list[str]]) -> None:
    score, parts = purchase_reward(product(), goal(), 45.0, FULL_OPTIONS, nouns)
    assert score == pytest.approx(0.8) and not parts["price_ok"]


def test_missing_attribute_and_option(nouns: dict[str, list[str]]) -> None:
    bare = product(Attributes=["paraben free"])
    score, _ = purchase_reward(bare, goal(), 20.0, {"size": "16 fl oz"}, nouns)
    assert score == pytest.approx(0.6)


def test_attribute_found_in_description_counts(nouns: dict[str, list[str]]) -> None:
    described = product(Attributes=["DUMMY_ATTR"], Description="paraben free and made of natural ingredient blends")
    score, _ = purchase_reward(described, goal(), 20.0, FULL_OPTIONS, nouns)
    assert score == 1.0


def test_wrong_type_scores_zero(nouns: dict[str, list[str]]) -> None:
    lamp = product(name="Brindle Oak Desk Lamp", Title="Brindle Oak Desk Lamp", query="desk lamp",
                   product_category="Home & Kitchen › Lighting › Desk Lamp")
    score, parts = purchase_reward(lamp, goal(), 20.0, FULL_OPTIONS, nouns)
    assert score == 0.0 and parts["r_type"] == 0.0 and parts["title_score"] == 0.0


def test_partial_type_match_halves_reward(nouns: dict[str, list[str]]) -> None:
    kit = product(name="Aurelle Mossfield Serum Jar Kit", query="face serum",
                  product_category="Beauty & Personal Care › Skin Care › Serum")
    parts = type_reward(kit, goal(product_category="Health › Hair Care"), nouns)
    # one shared noun out of the goal's four: 0.25 > 0.2, so the type still counts fully
    assert parts["title_score"] == 0.25 and parts["r_type"] == 1.0
    weak_goal = goal(name="Aurelle Serum Jar Kit Mossfield Set", query="face serum", product_category="Health › Hair Care")
    parts = type_reward(product(), weak_goal, nouns)
    # one of six nouns (1/6 ≈ 0.17): no query, category or title match -> 0.5
    assert parts["r_type"] == 0.5
    score, _ = purchase_reward(product(), weak_goal, 20.0, FULL_OPTIONS, nouns)
    assert score == pytest.approx(0.5)


def test_query_match_keeps_type_when_nouns_overlap_little(nouns: dict[str, list[str]]) -> None:
    same_query = goal(name="Aurelle Serum Jar Kit Mossfield Set", product_category="Other › Things")
    assert type_reward(product(), same_query, nouns)["r_type"] == 1.0


def test_repeated_goal_nouns_count_in_the_denominator() -> None:
    nouns = {"free soap": ["soap"], "soap free soap": ["soap", "free", "soap"]}
    parts = type_reward(product(name="free soap"), goal(name="soap free soap", query="x", product_category="a"), nouns)
    assert parts["title_score"] == pytest.approx(1 / 3)


def test_each_goal_option_counts_once() -> None:
    # two chosen values matching one goal option earn one match, not two
    assert option_matches(["lavender", "lavender oil"], ["lavender", "16 fl oz"]) == 1


def test_synthetic_goal_options_are_compared_as_name_value_pairs() -> None:
    # upstream passes ("size", "x-large") pairs: "large" is a token subset of "size x large"
    assert option_matches(["large"], [("size", "x-large")]) == 1
    assert option_matches(["small"], [("size", "x-large")]) == 0
    # and folds a pair only when one element is itself a base colour
    assert normalize_color(("color", "black")) == "black"
    assert normalize_color(("color", "navy blue")) == ("color", "navy blue")


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("fuzzy was a bear", "fuzzy fuzzy was a bear", 100),
        ("tea tree", "Tea-Tree oil", 100),
        ("natural ingredients", "natural ingredient", 97),
        ("high quality", "quality materials", 74),
        ("", "anything", 0),
        ("x-large", ("size", "large"), 83),
        ("café crème", "cafe creme", 89),
        ("DUMMY_ATTR", "dummy attr", 50),
        ("6 pack", "12 pack", 80),
    ],
)
def test_token_set_ratio_matches_thefuzz(first: Any, second: Any, expected: int) -> None:
    assert token_set_ratio(first, second) == expected


def test_colour_folding_takes_webshops_first_listed_colour() -> None:
    assert normalize_color("heather grey") == "grey"
    assert normalize_color("navy blue") == "blue"
    assert normalize_color("dark navy") == "dark"
    assert normalize_color("16 fl oz") == "16 fl oz"


def test_heuristic_tagger_keeps_content_words_in_order() -> None:
    nouns = HeuristicNounTagger().nouns(["Trevan Classic Hoodie, Navy Blue, 2 Pack"])
    assert nouns == {"Trevan Classic Hoodie, Navy Blue, 2 Pack": ["trevan", "hoodie", "navy", "blue"]}

"""Build the fixed WebShop reward inputs (``cases.json``) that upstream's ``get_reward`` scores.

Run with the project's environment (not by pytest)::

    python tests/conformance/webshop/build_cases.py

Two sources of product/goal pairs, each bought correctly and with one thing wrong:

* the synthetic catalogue's goals as ``WebShop-v0`` builds them (human and synthetic goals,
  product records, prices drawn with the env's seed), so the env can replay them end to end;
* hand-written products with Amazon-style titles and options (colour variants, sizes, packs,
  option values that only the title mentions), including the pairs of
  ``tests/envs/test_webshop_reward.py``.

Perturbations: ``gold`` (the goal's product, options and price), ``wrong_option`` (one option
value swapped), ``no_options`` (nothing chosen), ``wrong_price`` (just above the bound),
``wrong_attribute`` (a goal attribute removed from the product), ``same_type_other_product``
(another brand's product of the same type) and ``wrong_category`` (a product of another
department). ``regenerate_webshop_rewards.py`` then scores every case with upstream's code.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from agentgym_suite.envs.webshop.catalogue import load_catalogue  # noqa: E402
from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue  # noqa: E402

PRODUCT_KEYS = ("asin", "name", "Title", "query", "category", "product_category", "Attributes", "BulletPoints",
                "Description", "options")
GOAL_KEYS = ("asin", "name", "query", "category", "product_category", "attributes", "goal_options", "price_upper",
             "instruction_text")


def _product(record: dict[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(record[key]) for key in PRODUCT_KEYS}


def _goal(record: dict[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(record[key]) for key in GOAL_KEYS}


def _gold_options(product: dict[str, Any], goal: dict[str, Any]) -> dict[str, str]:
    if isinstance(goal["goal_options"], dict):
        return dict(goal["goal_options"])
    chosen = {}
    for name, values in product["options"].items():
        hits = [v for v in values if v in goal["goal_options"]]
        hits = hits or [v for v in values if any(wanted in v for wanted in goal["goal_options"])]
        if hits:
            chosen[name] = hits[0]
    return chosen


def _perturbations(goal: dict[str, Any], products: list[dict[str, Any]], price: float, source: str,
                   goal_index: int | None, split: str | None) -> list[dict[str, Any]]:
    by_asin = {p["asin"]: p for p in products}
    gold = by_asin[goal["asin"]]
    options = _gold_options(gold, goal)
    base = {"source": source, "goal_index": goal_index, "goals": split, "goal": _goal(goal)}
    cases = [dict(base, kind="gold", product=_product(gold), price=price, options=options)]
    for name, value in options.items():
        others = [v for v in gold["options"][name] if v != value]
        if others:
            cases.append(dict(base, kind="wrong_option", product=_product(gold), price=price,
                              options=dict(options, **{name: others[0]})))
            break
    cases.append(dict(base, kind="no_options", product=_product(gold), price=price, options={}))
    cases.append(dict(base, kind="wrong_price", product=_product(gold), price=float(goal["price_upper"]) + 0.01,
                      options=options))
    stripped = _product(gold)
    stripped["Attributes"] = [a for a in stripped["Attributes"] if a != goal["attributes"][0]] or ["DUMMY_ATTR"]
    cases.append(dict(base, kind="wrong_attribute", product=stripped, price=price, options=options))
    same_type = [p for p in products if p["query"] == gold["query"] and p["asin"] != gold["asin"]]
    if same_type:
        other = same_type[0]
        cases.append(dict(base, kind="same_type_other_product", product=_product(other), price=price,
                          options={k: v[-1] for k, v in other["options"].items()}))
    elsewhere = [p for p in products if p["category"] != gold["category"]]
    if elsewhere:
        other = elsewhere[goal_index % len(elsewhere) if goal_index is not None else 0]
        cases.append(dict(base, kind="wrong_category", product=_product(other), price=price,
                          options={k: v[0] for k, v in other["options"].items()}))
    return cases


def catalogue_cases(data_dir: Path) -> list[dict[str, Any]]:
    """Cases from the synthetic catalogue, as WebShop-v0 loads it (default seed)."""
    cases = []
    for goals, limit in (("human", None), ("synthetic", 24)):
        catalogue = load_catalogue(data_dir, goals=goals)
        for index, goal in enumerate(catalogue.goals[:limit]):
            price = catalogue.prices[goal["asin"]]
            cases += _perturbations(goal, catalogue.products, price, "synthetic_catalogue", index, goals)
    return cases


def _hand_product(asin: str, title: str, query: str, category: str, path: str, attributes: list[str],
                  options: dict[str, list[str]], bullets: list[str], description: str) -> dict[str, Any]:
    return {"asin": asin, "name": title, "Title": title, "query": query, "category": category,
            "product_category": path, "Attributes": attributes, "BulletPoints": bullets,
            "Description": description, "options": options}


HAND_PRODUCTS = [
    _hand_product("B0HAND0001", "Women's High Waisted Skinny Jeans Stretch Denim Pants with Pockets", "women's jeans",
                  "fashion", "Clothing, Shoes & Jewelry › Women › Clothing › Jeans",
                  ["machine wash", "high waist", "button closure", "stretch fabric"],
                  {"color": ["navy blue", "light grey", "black"], "size": ["small", "large", "x-large", "xx-large"]},
                  ["Soft stretch denim for all day comfort", "Five pocket styling"], "Skinny jeans in stretch denim."),
    _hand_product("B0HAND0002", "Men's Quick Dry Athletic Running Shorts with Zipper Pocket", "men's shorts",
                  "fashion", "Clothing, Shoes & Jewelry › Men › Clothing › Active › Shorts",
                  ["quick drying", "elastic waistband", "polyester spandex"],
                  {"color": ["heather grey", "dark navy", "army green"], "size": ["medium", "large", "x-large"]},
                  ["Lightweight fabric dries fast", "Zipper pocket for keys"], "Running shorts with a liner."),
    _hand_product("B0HAND0003", "Organic Green Tea Bags, Decaf Sencha, 100 Count", "green tea",
                  "grocery", "Grocery & Gourmet Food › Beverages › Tea › Green",
                  ["usda organic", "caffeine free", "non gmo"],
                  {"flavor name": ["sencha", "jasmine", "mint"], "size": ["100 count (pack of 1)", "100 count (pack of 6)"]},
                  ["Individually wrapped tea bags", "Brew 3 minutes"], "Decaffeinated organic sencha green tea."),
    _hand_product("B0HAND0004", "Gluten Free Keto Snack Bars, Dark Chocolate Sea Salt, 12 Pack", "keto bars",
                  "grocery", "Grocery & Gourmet Food › Snacks › Bars › Nutrition Bars",
                  ["gluten free", "low sugar", "keto friendly", "high protein"],
                  {"flavor name": ["dark chocolate sea salt", "peanut butter", "almond coconut"],
                   "size": ["12 count (pack of 1)", "12 count (pack of 2)"]},
                  ["Only 2g net carbs", "Made with real almonds"], "Crunchy keto bars with 10g protein."),
    _hand_product("B0HAND0005", "Mid Century Modern Coffee Table, Solid Wood Living Room Furniture", "coffee table",
                  "home", "Home & Kitchen › Furniture › Living Room Furniture › Tables › Coffee Tables",
                  ["mid century", "solid wood", "easy assemble"],
                  {"color": ["walnut", "natural oak", "espresso"]},
                  ["Tapered solid wood legs", "Tool-free assembly in 10 minutes"], "A low oval table for the living room."),
    _hand_product("B0HAND0006", "LED Desk Lamp with Wireless Charger, Dimmable Eye-Caring Table Light", "desk lamp",
                  "home", "Tools & Home Improvement › Lighting & Ceiling Fans › Lamps & Shades › Desk Lamps",
                  ["energy efficient", "dimmable", "usb port"],
                  {"color": ["white", "black"], "style": ["standard", "with clamp"]},
                  ["5 colour modes and 7 brightness levels", "Wireless charging pad in the base"], "Desk lamp for reading."),
    _hand_product("B0HAND0007", "Wireless Earbuds Bluetooth 5.3 Headphones with Noise Cancelling Mic", "wireless earbuds",
                  "electronics", "Electronics › Headphones, Earbuds & Accessories › Headphones › Earbud Headphones",
                  ["noise cancelling", "long battery life", "water resistant"],
                  {"color": ["rose gold", "midnight black", "pearl white"]},
                  ["40 hours of playtime with the case", "IPX7 waterproof"], "True wireless earbuds."),
    _hand_product("B0HAND0008", "Paraben Free Lavender Shampoo for Dry Hair, Sulfate Free, 16 fl oz", "shampoo",
                  "beauty", "Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",
                  ["paraben free", "sulfate free", "dry hair"],
                  {"scent": ["lavender", "coconut milk", "unscented"], "size": ["8 fl oz", "16 fl oz", "16 fl oz (pack of 2)"]},
                  ["Gentle daily cleanser", "Salon quality"], "A moisturising shampoo with natural lavender oil."),
]

HAND_GOALS = [
    ("B0HAND0001", ["high waist", "machine wash"], ["navy blue", "x-large"], 40.0),
    ("B0HAND0001", ["stretch fabric"], ["light grey", "small"], 30.0),
    ("B0HAND0002", ["quick drying", "elastic waistband"], ["heather grey", "large"], 30.0),
    ("B0HAND0002", ["polyester spandex"], ["navy", "medium"], 20.0),
    ("B0HAND0003", ["caffeine free", "usda organic"], ["sencha", "100 count (pack of 6)"], 50.0),
    ("B0HAND0004", ["gluten free", "keto friendly"], ["dark chocolate sea salt", "12 count (pack of 2)"], 60.0),
    ("B0HAND0005", ["mid century", "solid wood"], ["walnut"], 200.0),
    ("B0HAND0006", ["energy efficient", "dimmable"], ["white", "with clamp"], 40.0),
    ("B0HAND0007", ["noise cancelling", "long battery life"], ["rose gold"], 50.0),
    ("B0HAND0008", ["paraben free", "dry hair"], ["lavender", "16 fl oz"], 30.0),
]

# Option choices that probe the option rule one at a time: (asin, goal options, chosen options).
HAND_OPTION_PROBES = [
    ("B0HAND0001", ["navy blue", "x-large"], {"color": "navy blue", "size": "large"}),
    ("B0HAND0001", ["navy blue", "x-large"], {"color": "navy blue", "size": "xx-large"}),
    ("B0HAND0001", ["x-large", "navy blue"], {"color": "light grey", "size": "x-large"}),
    ("B0HAND0002", ["navy", "large"], {"color": "dark navy", "size": "x-large"}),
    ("B0HAND0002", ["grey", "medium"], {"color": "heather grey", "size": "medium"}),
    ("B0HAND0003", ["sencha", "100 count (pack of 6)"], {"flavor name": "sencha", "size": "100 count (pack of 1)"}),
    ("B0HAND0004", ["dark chocolate", "12 count"], {"flavor name": "dark chocolate sea salt", "size": "12 count (pack of 2)"}),
    ("B0HAND0008", ["lavender", "16 fl oz"], {"scent": "lavender", "size": "16 fl oz (pack of 2)"}),
    ("B0HAND0008", ["coconut", "16 fl oz"], {"scent": "coconut milk", "size": "16 fl oz"}),
    ("B0HAND0008", ["unscented", "8 fl oz"], {"scent": "lavender", "size": "16 fl oz"}),
    ("B0HAND0008", ["lavender", "16 fl oz"], {"scent": "lavender", "size": "16 fl oz", "color": "navy blue"}),
    ("B0HAND0007", ["black"], {"color": "midnight black"}),
    ("B0HAND0007", ["white"], {"color": "rose gold"}),
]


def hand_cases() -> list[dict[str, Any]]:
    """Cases from the hand-written products: goals with perturbations, then single option probes."""
    by_asin = {p["asin"]: p for p in HAND_PRODUCTS}
    cases = []
    for number, (asin, attributes, options, bound) in enumerate(HAND_GOALS):
        product = by_asin[asin]
        goal = {"asin": asin, "name": product["name"], "query": product["query"], "category": product["category"],
                "product_category": product["product_category"], "attributes": attributes, "goal_options": options,
                "price_upper": bound, "instruction_text": f"hand-written goal {number}"}
        cases += _perturbations(goal, HAND_PRODUCTS, bound - 5.0, "hand_written", number, None)
    for number, (asin, goal_options, chosen) in enumerate(HAND_OPTION_PROBES):
        product = by_asin[asin]
        goal = {"asin": asin, "name": product["name"], "query": product["query"], "category": product["category"],
                "product_category": product["product_category"], "attributes": product["Attributes"][:1],
                "goal_options": goal_options, "price_upper": 100.0, "instruction_text": f"option probe {number}"}
        cases.append({"source": "hand_written", "goal_index": None, "goals": None, "kind": "option_probe",
                      "goal": goal, "product": _product(product), "price": 10.0, "options": chosen})
    return cases


def _unit_test_product(**changes: Any) -> dict[str, Any]:
    base = {"asin": "B000000001", "name": "Mossfield Herbal Shampoo Bottle", "Title": "Mossfield Herbal Shampoo Bottle",
            "query": "shampoo", "category": "beauty", "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
            "Attributes": ["paraben free", "natural ingredients"], "BulletPoints": ["gentle every day"],
            "Description": "a gentle wash", "options": {"scent": ["lavender", "coconut"], "size": ["16 fl oz"]}}
    base.update(changes)
    return base


def _unit_test_goal(**changes: Any) -> dict[str, Any]:
    base = {"asin": "B000000001", "name": "Mossfield Herbal Shampoo Bottle", "query": "shampoo", "category": "beauty",
            "product_category": "Beauty & Personal Care › Hair Care › Shampoo",
            "attributes": ["paraben free", "natural ingredient"], "goal_options": ["lavender", "16 fl oz"],
            "price_upper": 30.0, "instruction_text": "unit test goal"}
    base.update(changes)
    return base


FULL = {"scent": "lavender", "size": "16 fl oz"}
UNIT_TEST_CASES: list[tuple[str, dict[str, Any], dict[str, Any], float, dict[str, str]]] = [
    ("full_match", _unit_test_product(), _unit_test_goal(), 20.0, FULL),
    ("missing_option", _unit_test_product(), _unit_test_goal(), 20.0, {"scent": "lavender"}),
    ("size_with_extra_word", _unit_test_product(), _unit_test_goal(), 20.0, {"scent": "lavender", "size": "16 fl oz pack"}),
    ("option_only_in_title", _unit_test_product(Title="Mossfield Herbal Shampoo Bottle, Coconut"), _unit_test_goal(),
     20.0, {"scent": "coconut", "size": "16 fl oz"}),
    ("wrong_price", _unit_test_product(), _unit_test_goal(), 45.0, FULL),
    ("missing_attribute_and_option", _unit_test_product(Attributes=["paraben free"]), _unit_test_goal(), 20.0,
     {"size": "16 fl oz"}),
    ("attribute_in_description", _unit_test_product(
        Attributes=["DUMMY_ATTR"], Description="paraben free and made of natural ingredient blends"),
     _unit_test_goal(), 20.0, FULL),
    ("wrong_type", _unit_test_product(name="Brindle Oak Desk Lamp", Title="Brindle Oak Desk Lamp", query="desk lamp",
                                      product_category="Home & Kitchen › Lighting › Desk Lamp"),
     _unit_test_goal(), 20.0, FULL),
    ("partial_type_other_category", _unit_test_product(
        name="Aurelle Mossfield Serum Jar Kit", query="face serum",
        product_category="Beauty & Personal Care › Skin Care › Serum"),
     _unit_test_goal(product_category="Health › Hair Care"), 20.0, FULL),
    ("weak_type_no_query_or_category", _unit_test_product(),
     _unit_test_goal(name="Aurelle Serum Jar Kit Mossfield Set", query="face serum", product_category="Health › Hair Care"),
     20.0, FULL),
    ("weak_type_same_query", _unit_test_product(),
     _unit_test_goal(name="Aurelle Serum Jar Kit Mossfield Set", product_category="Other › Things"), 20.0, FULL),
]


def unit_test_cases() -> list[dict[str, Any]]:
    """The pairs ``tests/envs/test_webshop_reward.py`` asserts on, by name."""
    return [{"source": "unit_test", "goal_index": None, "goals": None, "kind": name, "goal": goal, "product": product,
             "price": price, "options": options} for name, product, goal, price, options in UNIT_TEST_CASES]


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        cases = catalogue_cases(write_synthetic_catalogue(Path(scratch) / "webshop"))
    cases += hand_cases() + unit_test_cases()
    for number, case in enumerate(cases):
        case["id"] = f"{number:04d}-{case['source']}-{case['kind']}"
    path = HERE / "cases.json"
    path.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()

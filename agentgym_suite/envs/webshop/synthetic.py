"""A small synthetic catalogue in WebShop's file formats, for tests, demos and smoke runs.

:func:`write_synthetic_catalogue` writes ``items_shuffle_1000.json`` (products),
``items_ins_v2_1000.json`` (attributes), ``items_human_ins.json`` (instructions) and
``reviews.json`` into a directory, with the same fields the official files have. The products
(a few dozen, in five departments with colour/size options, attributes and prices) are invented
here; nothing of the real catalogue is reproduced.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

_DEPARTMENTS: dict[str, dict[str, Any]] = {
    "beauty": {
        "path": "Beauty & Personal Care › {sub} › {type}",
        "types": {"shampoo": "Hair Care", "lip balm": "Lip Care", "face serum": "Skin Care"},
        "attributes": ["paraben free", "cruelty free", "long lasting", "sensitive skin", "travel size", "vitamin e"],
        "options": {"scent": ["lavender", "coconut", "unscented"], "size": ["8 fl oz", "16 fl oz"]},
        "brands": ["Aurelle", "Mossfield", "Pellwyn"],
    },
    "fashion": {
        "path": "Clothing, Shoes & Jewelry › {sub} › {type}",
        "types": {"hoodie": "Men", "sneaker": "Women", "rain jacket": "Outdoor"},
        "attributes": ["machine wash", "quick drying", "button closure", "slim fit", "rubber sole", "cotton blend"],
        "options": {"color": ["black", "navy blue", "heather grey"], "size": ["small", "medium", "large"]},
        "brands": ["Trevan", "Northloom", "Quillo"],
    },
    "grocery": {
        "path": "Grocery & Gourmet Food › {sub} › {type}",
        "types": {"green tea": "Beverages", "dark chocolate": "Snacks", "almond butter": "Spreads"},
        "attributes": ["gluten free", "non gmo", "low sugar", "keto friendly", "certified organic", "resealable bag"],
        "options": {"flavor": ["original", "sea salt", "honey"], "size": ["6 pack", "12 pack"]},
        "brands": ["Harrowby", "Sunmeadow", "Olvera"],
    },
    "home": {
        "path": "Home & Kitchen › {sub} › {type}",
        "types": {"coffee table": "Furniture", "desk lamp": "Lighting", "throw pillow": "Decor"},
        "attributes": ["easy assemble", "solid wood", "living room", "energy efficient", "storage space", "mid century"],
        "options": {"color": ["walnut", "white", "sage green"]},
        "brands": ["Brindle", "Calderon", "Westwick"],
    },
    "electronics": {
        "path": "Electronics › {sub} › {type}",
        "types": {"wireless earbuds": "Headphones", "phone case": "Accessories", "usb cable": "Cables"},
        "attributes": ["fast charging", "noise cancelling", "water resistant", "long battery life", "shock absorbing", "high speed"],
        "options": {"color": ["black", "rose gold", "white"], "length": ["3 ft", "6 ft"]},
        "brands": ["Voltaro", "Kestrel", "Ionwave"],
    },
}
_STYLES = ["Classic", "Everyday", "Signature"]


def _asin(rng: random.Random) -> str:
    return "B0" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(8))


def build_synthetic_catalogue(seed: int = 0) -> dict[str, Any]:
    """Return the four WebShop files' contents (``products``, ``attributes``, ``human``, ``reviews``)."""
    rng = random.Random(seed)
    products: list[dict[str, Any]] = []
    attributes: dict[str, Any] = {}
    human: dict[str, Any] = {}
    reviews: list[dict[str, Any]] = []
    for department, spec in _DEPARTMENTS.items():
        for product_type, sub in spec["types"].items():
            for number, brand in enumerate(spec["brands"]):
                asin = _asin(rng)
                style = _STYLES[number]
                attrs = rng.sample(spec["attributes"], 3)
                options = {name: rng.sample(values, min(len(values), 2 + (number % 2))) for name, values in spec["options"].items()}
                low = round(rng.uniform(8, 80), 2)
                pricing = f"${low}" if number != 1 else f"${low} - ${round(low * 1.4, 2)}"
                title = f"{brand} {style} {product_type.title()}"
                products.append({
                    "asin": asin,
                    "category": department,
                    "query": product_type,
                    "name": title,
                    "product_category": spec["path"].format(sub=sub, type=product_type.title()),
                    "full_description": f"The {style.lower()} {product_type} from {brand}, made with care for daily use.",
                    "small_description": [f"{brand} quality you can trust", f"Designed as a {style.lower()} {product_type}"],
                    "pricing": pricing,
                    "customization_options": {
                        name.title(): [{"value": value, "image": None} for value in values] for name, values in options.items()
                    },
                    "images": [f"https://example.invalid/{asin}.jpg"],
                    "average_rating": round(rng.uniform(3, 5), 1),
                })
                attributes[asin] = {"attributes": attrs}
                goal_options = [values[-1] for values in options.values()]
                wanted = attrs[:2]
                attributes[asin].update({
                    "instruction": f"Find me {wanted[0]}, {wanted[1]} {product_type}",
                    "instruction_attributes": wanted,
                })
                if number != 2:
                    human[asin] = [{
                        "asin": asin,
                        "instruction": f"i need a {product_type} that is {wanted[0]} and {wanted[1]}, "
                                       f"in {' and '.join(goal_options)}",
                        "instruction_attributes": wanted,
                        "instruction_options": goal_options,
                    }]
                reviews.append({"asin": asin, "average_rating": products[-1]["average_rating"], "reviews": [
                    {"title": "Does the job", "score": 4, "body": f"Good {product_type}, would buy again."}]})
    rng.shuffle(products)
    return {"products": products, "attributes": attributes, "human": human, "reviews": reviews}


def write_synthetic_catalogue(directory: str | Path, seed: int = 0) -> Path:
    """Write the synthetic catalogue's files into ``directory`` and return it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    content = build_synthetic_catalogue(seed)
    files = {"items_shuffle_1000.json": "products", "items_ins_v2_1000.json": "attributes",
             "items_human_ins.json": "human", "reviews.json": "reviews"}
    for filename, key in files.items():
        (directory / filename).write_text(json.dumps(content[key], indent=1), encoding="utf-8")
    return directory

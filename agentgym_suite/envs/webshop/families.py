"""WebShop task families: the product category an instruction asks for, by its keywords.

The family names the skill text a teacher gets for the task (``webshop_apparel`` …).
"""

from __future__ import annotations

PRODUCT_FAMILIES: dict[str, tuple[str, ...]] = {
    "webshop_apparel": ("shirt", "dress", "shoe", "sneaker", "boot", "jacket", "pant", "jean", "sock", "hoodie",
                        "sweater", "skirt", "bra", "legging", "coat", "sandal", "hat", "t-shirt", "shorts"),
    "webshop_beauty": ("shampoo", "conditioner", "lotion", "cream", "serum", "makeup", "lipstick", "nail", "hair",
                       "skin", "perfume", "deodorant", "toothpaste", "soap", "mascara", "brush"),
    "webshop_food": ("snack", "coffee", "tea", "chocolate", "cookie", "sauce", "gluten", "organic", "candy", "nut",
                     "flavor", "protein", "juice", "cereal", "spice", "jerky"),
    "webshop_home": ("table", "chair", "lamp", "pillow", "curtain", "rug", "kitchen", "cable", "charger", "speaker",
                     "headphone", "case", "bed", "sofa", "shelf", "light", "camera", "tv"),
}
"""Family -> keywords of instructions in that product category."""


def product_family(instruction: str) -> str:
    """The family whose keywords occur most often in ``instruction`` (first on ties), ``""`` when none does."""
    words = instruction.lower()
    best, hits = "", 0
    for family, keywords in PRODUCT_FAMILIES.items():
        count = sum(1 for w in keywords if w in words)
        if count > hits:
            best, hits = family, count
    return best

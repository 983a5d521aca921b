"""WebShop task families: the department of the goal product in WebShop's category tree.

Every catalogue product carries its broad ``category`` (the department WebShop scraped it
under: ``beauty``, ``fashion``, ``food``, ``furniture``, ``electronics``; WebShop's own
attribute mining groups products by this field) and its Amazon breadcrumb
``product_category`` (``Beauty & Personal Care › Hair Care › Shampoo``). A goal inherits both
from its product, so a task's family is read from the tree, never guessed from the words
of the instruction: the department first, the breadcrumb's top level when the department is
one this table does not know.

The family names the skill text a teacher gets for the task (``webshop_apparel`` …).
"""

from __future__ import annotations

from typing import Any, Mapping

DEPARTMENT_FAMILIES: dict[str, str] = {
    "beauty": "webshop_beauty",
    "makeup": "webshop_beauty",
    "fashion": "webshop_apparel",
    "food": "webshop_food",
    "grocery": "webshop_food",
    "furniture": "webshop_home",
    "home": "webshop_home",
    "electronics": "webshop_home",
}
"""The catalogue's ``category`` (department) -> family."""

TOP_LEVEL_FAMILIES: dict[str, str] = {
    "beauty & personal care": "webshop_beauty",
    "health & household": "webshop_beauty",
    "clothing, shoes & jewelry": "webshop_apparel",
    "grocery & gourmet food": "webshop_food",
    "home & kitchen": "webshop_home",
    "tools & home improvement": "webshop_home",
    "patio, lawn & garden": "webshop_home",
    "electronics": "webshop_home",
    "cell phones & accessories": "webshop_home",
    "computers": "webshop_home",
}
"""Top level of the ``product_category`` breadcrumb -> family, for departments not in the table above."""

BREADCRUMB_SEPARATOR = "›"


def product_family(goal: Mapping[str, Any]) -> str:
    """The family of a goal (or product) record from its ``category`` and ``product_category``; ``""`` when neither is known."""
    department = str(goal.get("category") or "").strip().lower()
    if department in DEPARTMENT_FAMILIES:
        return DEPARTMENT_FAMILIES[department]
    top = str(goal.get("product_category") or "").split(BREADCRUMB_SEPARATOR)[0].strip().lower()
    return TOP_LEVEL_FAMILIES.get(top, "")

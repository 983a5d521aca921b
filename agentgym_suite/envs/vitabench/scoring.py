"""Deterministic VitaBench scoring: the final database against each task's expected states.

``expected_states`` lists alternatives; the episode passes when one of them holds. A state
holds when every required record is present with the right status class and no new active
record exists beyond the required and optional ones. Records are matched by kind:

- product orders (``order_id``): an existing order by id; a new one by store id and the
  multiset of (product id, quantity), or several new orders at that store whose products
  together make that multiset (upstream's in-store tool orders one product at a time);
- bookings (``book_id``): shop id, party size and booking time;
- reservations (``reservation_id``): shop id, party size and reservation time.

Status classes: ``unpaid``; ``cancelled``; everything else (paid, processed, in-progress,
delivered, unconsumed) is ``active``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def status_class(status: Any) -> str:
    """Map a record status to ``unpaid``, ``cancelled`` or ``active``."""
    s = str(status or "").lower()
    return s if s in ("unpaid", "cancelled") else "active"


def record_kind(record: dict[str, Any]) -> str:
    """``order``, ``book`` or ``reservation``."""
    if "book_id" in record:
        return "book"
    if "reservation_id" in record:
        return "reservation"
    return "order"


TABLE = {"order": "orders", "book": "books", "reservation": "reservations"}


def _products(record: dict[str, Any]) -> Counter:
    return Counter((p.get("product_id"), int(p.get("quantity", 1))) for p in record.get("products", []))


def same_record(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """True when ``actual`` fulfils ``expected`` (ignoring ids of new records and timestamps)."""
    kind = record_kind(expected)
    if status_class(expected.get("status")) != status_class(actual.get("status")):
        return False
    if kind == "order":
        return expected.get("store_id") == actual.get("store_id") and _products(expected) == _products(actual)
    shop_ok = expected.get("shop_id") == actual.get("shop_id") and int(expected.get("customer_count", 0)) == int(actual.get("customer_count", 0))
    key = "book_time" if kind == "book" else "reservation_time"
    return shop_ok and (key not in expected or str(expected[key])[:16] == str(actual.get(key, ""))[:16])


def _split_order(expected: dict[str, Any], initial: dict[str, Any], final: dict[str, Any], used: set[tuple[str, str]]) -> list[str] | None:
    """New orders, one per product, that together fulfil an expected order of several products.

    Upstream's in-store tool orders one product at a time, so an expected in-store order of two
    products is placed as two orders at the same shop.
    """
    want = _products(expected)
    if len(want) < 2:
        return None
    picked, have = [], Counter()
    for key, order in (final.get("orders") or {}).items():
        if ("orders", key) in used or key in (initial.get("orders") or {}) or order.get("store_id") != expected.get("store_id"):
            continue
        if status_class(order.get("status")) != status_class(expected.get("status")):
            continue
        lines = _products(order)
        if all(have[item] + n <= want[item] for item, n in lines.items()):
            picked.append(key)
            have.update(lines)
    return picked if have == want else None


def check_state(expected: dict[str, Any], initial: dict[str, Any], final: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether ``final`` satisfies one expected state; the problems found otherwise."""
    problems: list[str] = []
    used: set[tuple[str, str]] = set()
    for record in expected.get("required_orders", []):
        kind = record_kind(record)
        table = TABLE[kind]
        rid = record.get(f"{kind}_id" if kind != "order" else "order_id")
        if rid in (initial.get(table) or {}):
            actual = (final.get(table) or {}).get(rid, {})
            if status_class(actual.get("status")) != status_class(record.get("status")):
                problems.append(f"{kind} {rid} should be {record.get('status')}, is {actual.get('status')}")
            used.add((table, rid))
            continue
        match = next((k for k, v in (final.get(table) or {}).items()
                      if (table, k) not in used and k not in (initial.get(table) or {}) and same_record(record, v)), None)
        split = _split_order(record, initial, final, used) if match is None and kind == "order" else None
        if match is not None:
            used.add((table, match))
        elif split:
            used.update(("orders", k) for k in split)
        else:
            problems.append(f"no {kind} matching the expected {kind} {rid} (shop/store {record.get('store_id') or record.get('shop_id')})")
    for record in expected.get("optional_orders", []) or []:
        table = TABLE[record_kind(record)]
        match = next((k for k, v in (final.get(table) or {}).items() if (table, k) not in used and same_record(record, v)), None)
        if match is not None:
            used.add((table, match))
    for table in TABLE.values():
        for rid, record in (final.get(table) or {}).items():
            if rid not in (initial.get(table) or {}) and (table, rid) not in used and status_class(record.get("status")) != "cancelled":
                problems.append(f"unexpected new {table[:-1]} {rid}")
    return not problems, problems


def score_states(expected_states: list[dict[str, Any]], initial: dict[str, Any], final: dict[str, Any]) -> tuple[bool, list[str]]:
    """Pass when any expected state holds; otherwise the problems of the closest one."""
    best: list[str] | None = None
    for state in expected_states:
        ok, problems = check_state(state, initial, final)
        if ok:
            return True, []
        if best is None or len(problems) < len(best):
            best = problems
    return (not expected_states), best or []

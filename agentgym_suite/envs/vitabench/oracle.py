"""Tool calls that bring a task's database to its first expected state."""

from __future__ import annotations

from typing import Any

from agentgym_suite.envs.vitabench.scoring import TABLE, record_kind, same_record, status_class

OTA_ORDER_TYPES = ("hotel", "attraction", "flight", "train", "taxi")
TRAVEL_TABLE = {"hotel": "hotels", "attraction": "attractions", "flight": "flights", "train": "trains", "taxi": "taxis"}
UNIT_ID = {"attraction": "ticket_id", "flight": "seat_id", "train": "seat_id"}


def _full_time(value: Any) -> str:
    """A time as upstream's booking tools require it (``%Y-%m-%d %H:%M:%S``; seconds added when missing)."""
    text = str(value or "")
    return text + ":00" if len(text) == 16 else text


def plan_calls(domain: str, expected: dict[str, Any], initial: dict[str, Any], current: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    """(tool, arguments, then-pay tool or None) for each required record not yet in place.

    Arguments follow upstream's tool signatures (the user id passed explicitly, a delivery
    dispatched at the expected order's dispatch time, or at the task's clock when that is
    earlier or unset). A ``then``
    tool is called with the id the creating call returns; a booking is paid only when the
    expected one has a deposit (upstream marks a booking without deposit paid at once).
    """
    calls: list[tuple[str, dict[str, Any], str | None]] = []
    for record in expected.get("required_orders", []):
        if record_kind(record) == "order" and record.get("order_type") in OTA_ORDER_TYPES:
            calls.extend(_travel_calls(record, initial, current))
            continue
        kind = record_kind(record)
        table = TABLE[kind]
        where = _record_domain(domain, record, kind)
        rid = record.get("order_id") if kind == "order" else record.get(f"{kind}_id")
        want = status_class(record.get("status"))
        if rid in (initial.get(table) or {}):
            have = status_class((current.get(table) or {}).get(rid, {}).get("status"))
            if have != want and want == "cancelled":
                name = {"order": "cancel_delivery_order" if where == "delivery" else "instore_cancel_order",
                        "book": "instore_cancel_book", "reservation": "instore_cancel_reservation"}[kind]
                calls.append((name, {f"{kind}_id" if kind != "order" else "order_id": rid}, None))
            elif have == "unpaid" and want == "active":
                name = {"order": "pay_delivery_order" if where == "delivery" else "pay_instore_order", "book": "pay_instore_book"}.get(kind)
                if name:
                    calls.append((name, {f"{kind}_id" if kind != "order" else "order_id": rid}, None))
            continue
        if any(k not in (initial.get(table) or {}) and same_record(record, v) for k, v in (current.get(table) or {}).items()):
            continue
        pay = want == "active"
        user = str(initial.get("user_id") or "")
        if kind == "order":
            products = record.get("products", [])
            if where == "delivery":
                args: dict[str, Any] = {
                    "user_id": user, "store_id": record["store_id"],
                    "product_ids": [str(p.get("product_id", "")) for p in products],
                    "product_cnts": [int(p.get("quantity", 1)) for p in products],
                    "address": (record.get("location") or {}).get("address", ""),
                    "dispatch_time": max(str(record.get("dispatch_time") or ""), str(initial.get("time") or "")),
                }
                attributes = [str(p.get("attributes") or "") for p in products]
                if any(attributes):
                    args["attributes"] = attributes
                if record.get("note"):
                    args["note"] = record["note"]
                calls.append(("create_delivery_order", args, "pay_delivery_order" if pay else None))
            else:  # an in-store order holds one product; several products take several orders
                for p in products:
                    args = {"user_id": user, "shop_id": record["store_id"], "product_id": str(p.get("product_id", "")),
                            "quantity": int(p.get("quantity", 1))}
                    calls.append(("create_instore_product_order", args, "pay_instore_order" if pay else None))
        elif kind == "book":
            args = {"user_id": user, "shop_id": record["shop_id"], "time": _full_time(record.get("book_time")),
                    "customer_count": int(record.get("customer_count", 1))}
            calls.append(("instore_book", args, "pay_instore_book" if pay and float(record.get("book_price") or 0) > 0 else None))
        else:
            args = {"user_id": user, "shop_id": record["shop_id"], "time": _full_time(record.get("reservation_time")),
                    "customer_count": int(record.get("customer_count", 1))}
            calls.append(("instore_reservation", args, None))
    return calls


def _record_domain(domain: str, record: dict[str, Any], kind: str) -> str:
    """``delivery`` or ``instore``: the record's own order type, else the task's domain (of a cross-domain
    task, the one that has such records)."""
    if record.get("order_type") in ("delivery", "instore"):
        return str(record["order_type"])
    if "," in domain:
        return "delivery" if kind == "order" and "delivery" in domain.split(",") else "instore"
    return domain


def _product_date(current: dict[str, Any], order_type: str, store_id: Any, product_id: str) -> str:
    """The date of a travel record's product (the first one with that id) when the expected order names none."""
    record = (current.get(TRAVEL_TABLE[order_type]) or {}).get(store_id) or {}
    return next((str(p.get("date") or "") for p in record.get("products") or [] if p.get("product_id") == product_id), "")


def _travel_calls(record: dict[str, Any], initial: dict[str, Any], current: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    """Calls for one expected OTA order: pay or cancel an existing one, else book it (one order per product
    line, as upstream's booking tools order one product at a time)."""
    order_type = str(record["order_type"])
    rid, want, user = record.get("order_id"), status_class(record.get("status")), str(initial.get("user_id") or "")
    if rid in (initial.get("orders") or {}):
        have = status_class((current.get("orders") or {}).get(rid, {}).get("status"))
        if have != want and want == "cancelled":
            return [(f"cancel_{order_type}_order", {"order_id": rid, "user_id": user}, None)]
        if have == "unpaid" and want == "active":
            return [(f"pay_{order_type}_order", {"order_id": rid}, None)]
        return []
    if any(k not in (initial.get("orders") or {}) and same_record(record, v) for k, v in (current.get("orders") or {}).items()):
        return []
    then = f"pay_{order_type}_order" if want == "active" else None
    calls: list[tuple[str, dict[str, Any], str | None]] = []
    for p in record.get("products", []):
        pid, quantity = str(p.get("product_id", "")), int(p.get("quantity", 1))
        if order_type == "hotel":
            args: dict[str, Any] = {"hotel_id": record["store_id"], "room_id": pid, "user_id": user}
        elif order_type == "taxi":
            args = {"taxi_id": record["store_id"], "product_id": pid, "user_id": user, "quantity": quantity}
        else:
            date = str(p.get("date") or _product_date(current, order_type, record["store_id"], pid))
            args = {f"{order_type}_id": record["store_id"], UNIT_ID[order_type]: pid, "user_id": user, "date": date, "quantity": quantity}
        calls.append((f"create_{order_type}_order", args, then))
    return calls

"""VitaBench tools over the database each task embeds (delivery and in-store services).

The tool names follow upstream's; parameters and results are this suite's own design,
derived from the database fields. Each tool reads or writes ``self.db`` (a deep copy of the
task's ``environment``); new records get ids ``<task id>N<k>``. Errors are returned as
``{"error": ...}`` results.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

STR = {"type": "string"}
INT = {"type": "integer", "minimum": 1}
NUM = {"type": "number"}
ITEMS = {
    "type": "array", "minItems": 1,
    "items": {"type": "object", "properties": {"product_id": STR, "quantity": INT, "attributes": STR}, "required": ["product_id", "quantity"]},
}

PAID, UNPAID, CANCELLED, UNCONSUMED = "paid", "unpaid", "cancelled", "unconsumed"


def _schema(name: str, description: str, required: tuple[str, ...] = (), **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}}}


def _match(text: str, keywords: str) -> bool:
    words = [w for w in keywords.lower().replace(",", " ").split() if w]
    hay = text.lower()
    return bool(words) and all(w in hay for w in words) or any(len(w) > 3 and w in hay for w in words)


def haversine_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance in metres."""
    r = 6_371_000.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


class VitaTools:
    """The tools of one episode. ``schemas`` and ``handlers`` feed :class:`ToolEnv`."""

    def __init__(self, task_id: str, domain: str, environment: dict[str, Any]) -> None:
        self.task_id = task_id
        self.domain = domain
        self.db = copy.deepcopy(environment)
        for key in ("orders", "books", "reservations"):
            if not isinstance(self.db.get(key), dict):
                self.db[key] = {}
        self._counter = 0
        self.schemas: list[dict[str, Any]] = []
        self.handlers: dict[str, Callable[..., Any]] = {}
        self._register_generic()
        self._register_delivery() if domain == "delivery" else self._register_instore()

    # ------------------------------------------------------------------ helpers
    def _add(self, schema: dict[str, Any], fn: Callable[..., Any]) -> None:
        self.schemas.append(schema)
        self.handlers[schema["function"]["name"]] = fn

    def _new_id(self) -> str:
        self._counter += 1
        return f"{self.task_id}N{self._counter:02d}"

    @property
    def now(self) -> str:
        """The task's current time."""
        return str(self.db.get("time", ""))

    @property
    def stores(self) -> dict[str, Any]:
        """Delivery stores or in-store shops by id."""
        return self.db.get("stores") or self.db.get("shops") or {}

    def _product(self, product_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        for store in self.stores.values():
            for product in store.get("products", []):
                if product.get("product_id") == product_id:
                    return store, product
        return None

    def _order_lines(self, store_id: str, items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], float] | dict[str, str]:
        store = self.stores.get(store_id)
        if store is None:
            return {"error": f"no store or shop with id {store_id}"}
        lines, total = [], 0.0
        for item in items:
            found = self._product(item["product_id"])
            if found is None or found[0] is not store:
                return {"error": f"product {item['product_id']} is not sold by {store_id}"}
            product = found[1]
            lines.append({"product_id": product["product_id"], "name": product.get("name", ""), "price": product.get("price", 0),
                          "quantity": item["quantity"], "attributes": item.get("attributes", "")})
            total += float(product.get("price", 0)) * item["quantity"]
        return lines, total

    def _record(self, table: str, record_id: str) -> dict[str, Any] | None:
        record = self.db[table].get(record_id)
        return record if isinstance(record, dict) else None

    def _new_order(self, order_type: str, store_id: str, lines: tuple[list[dict[str, Any]], float], *,
                   note: str = "", location: dict[str, Any] | None = None, dispatch_time: str = "") -> dict[str, Any]:
        order_id = self._new_id()
        self.db["orders"][order_id] = {
            "order_id": order_id, "order_type": order_type, "user_id": self.db.get("user_id"), "store_id": store_id,
            "note": note, "location": location, "dispatch_time": dispatch_time, "shipping_time": None, "delivery_time": "",
            "total_price": lines[1], "create_time": self.now, "update_time": self.now, "status": UNPAID, "products": lines[0],
        }
        return self.db["orders"][order_id]

    def _set_status(self, table: str, record_id: str, allowed_from: tuple[str, ...], to: str) -> dict[str, Any]:
        record = self._record(table, record_id)
        if record is None:
            return {"error": f"no record {record_id} in {table}"}
        if record.get("status") not in allowed_from:
            return {"error": f"{record_id} has status {record.get('status')!r}; this needs one of {list(allowed_from)}"}
        record["status"] = to
        record["update_time"] = self.now
        return {"id": record_id, "status": to}

    # ------------------------------------------------------------------ generic tools
    def _register_generic(self) -> None:
        db = self.db
        self._add(_schema("get_user_historical_behaviors", "The user's profile and historical consumption behaviour."),
                  lambda: db.get("user_historical_behaviors", {}))
        self._add(_schema("get_user_all_orders", "All of the user's orders, bookings and reservations."),
                  lambda: {"orders": list(db["orders"].values()), "books": list(db["books"].values()), "reservations": list(db["reservations"].values())})
        self._add(_schema("weather", "Weather forecast records, optionally for one city and/or date (YYYY-MM-DD).", city=STR, date=STR),
                  self.weather)
        self._add(_schema("address_to_longitude_latitude", "Coordinates of a known address.", ("address",), address=STR),
                  self.address_to_longitude_latitude)
        self._add(_schema("longitude_latitude_to_distance", "Distance in metres between two coordinates.",
                          ("longitude1", "latitude1", "longitude2", "latitude2"), longitude1=NUM, latitude1=NUM, longitude2=NUM, latitude2=NUM),
                  lambda longitude1, latitude1, longitude2, latitude2: {"distance_m": round(haversine_m(longitude1, latitude1, longitude2, latitude2))})

    def weather(self, city: str = "", date: str = "") -> Any:
        """Weather records filtered by city substring and date prefix."""
        rows = [w for w in self.db.get("weather", []) if (not city or city.lower().split()[0] in str(w.get("city", "")).lower())
                and (not date or str(w.get("datetime", "")).startswith(date))]
        return rows or {"error": "no weather record for that city/date"}

    def address_to_longitude_latitude(self, address: str) -> Any:
        """Look up an address in the task's location table (exact, then substring)."""
        for row in self.db.get("location", []):
            if row.get("address") == address or address.lower() in str(row.get("address", "")).lower():
                return row
        return {"error": f"unknown address {address!r}"}

    # ------------------------------------------------------------------ delivery
    def _register_delivery(self) -> None:
        self._add(_schema("delivery_store_search_recommand", "Search delivery stores by keywords (name, tags, products).", ("keywords",), keywords=STR),
                  self.store_search)
        self._add(_schema("delivery_product_search_recommand", "Search delivery products by keywords.", ("keywords",), keywords=STR),
                  self.product_search)
        self._add(_schema("get_delivery_store_info", "A delivery store with its products.", ("store_id",), store_id=STR),
                  lambda store_id: self.stores.get(store_id) or {"error": f"no store {store_id}"})
        self._add(_schema("get_delivery_product_info", "One delivery product.", ("product_id",), product_id=STR),
                  lambda product_id: (self._product(product_id) or (None, {"error": f"no product {product_id}"}))[1])
        self._add(_schema("delivery_distance_to_time", "Estimated delivery time in minutes for a distance in metres.", ("distance_m",), distance_m=NUM),
                  lambda distance_m: {"minutes": round(15 + distance_m / 250)})
        self._add(_schema("create_delivery_order", "Create an unpaid delivery order.", ("store_id", "items", "address"),
                          store_id=STR, items=ITEMS, address=STR, note=STR, dispatch_time=STR),
                  self.create_delivery_order)
        self._add(_schema("pay_delivery_order", "Pay an unpaid delivery order.", ("order_id",), order_id=STR),
                  lambda order_id: self._set_status("orders", order_id, (UNPAID,), PAID))
        self._add(_schema("cancel_delivery_order", "Cancel a delivery order that is not delivered yet.", ("order_id",), order_id=STR),
                  lambda order_id: self._set_status("orders", order_id, (UNPAID, PAID, "processed", "in-progress"), CANCELLED))
        self._add(_schema("modify_delivery_order", "Change the note or address of an order that is not delivered yet.", ("order_id",),
                          order_id=STR, note=STR, address=STR), self.modify_delivery_order)
        self._add(_schema("get_delivery_order_detail", "One delivery order.", ("order_id",), order_id=STR),
                  lambda order_id: self.db["orders"].get(order_id) or {"error": f"no order {order_id}"})

    def store_search(self, keywords: str) -> Any:
        """Stores whose name, tags or product names match the keywords."""
        hits = []
        for sid, store in self.stores.items():
            text = " ".join([str(store.get("name", store.get("shop_name", ""))), *map(str, store.get("tags", [])),
                             *(str(p.get("name", "")) for p in store.get("products", []))])
            if _match(text, keywords):
                hits.append({"store_id": sid, "name": store.get("name", store.get("shop_name")), "score": store.get("score"),
                             "tags": store.get("tags", []), "address": (store.get("location") or {}).get("address")})
        return hits[:20] or {"error": f"no store matches {keywords!r}"}

    def product_search(self, keywords: str) -> Any:
        """Products whose name or tags match the keywords."""
        hits = [p for s in self.stores.values() for p in s.get("products", [])
                if _match(" ".join([str(p.get("name", "")), *map(str, p.get("tags", []))]), keywords)]
        return hits[:20] or {"error": f"no product matches {keywords!r}"}

    def create_delivery_order(self, store_id: str, items: list[dict[str, Any]], address: str, note: str = "", dispatch_time: str = "") -> Any:
        """Create an unpaid delivery order to a known address."""
        lines = self._order_lines(store_id, items)
        if isinstance(lines, dict):
            return lines
        location = self.address_to_longitude_latitude(address)
        if "error" in location:
            return location
        return self._new_order("delivery", store_id, lines, note=note, location=location, dispatch_time=dispatch_time)

    def modify_delivery_order(self, order_id: str, note: str | None = None, address: str | None = None) -> Any:
        """Change an open order's note or address."""
        order = self._record("orders", order_id)
        if order is None or order.get("status") in (CANCELLED, "delivered"):
            return {"error": f"order {order_id} cannot be modified"}
        if address is not None:
            location = self.address_to_longitude_latitude(address)
            if "error" in location:
                return location
            order["location"] = location
        if note is not None:
            order["note"] = note
        order["update_time"] = self.now
        return order

    # ------------------------------------------------------------------ in-store
    def _register_instore(self) -> None:
        self._add(_schema("instore_shop_search_recommend", "Search shops by keywords (name, tags, category, products).", ("keywords",), keywords=STR),
                  self.store_search)
        self._add(_schema("instore_product_search_recommend", "Search in-store products (vouchers, set meals) by keywords.", ("keywords",), keywords=STR),
                  self.product_search)
        self._add(_schema("get_instore_shop_info", "One shop with its products, booking and reservation options.", ("shop_id",), shop_id=STR),
                  lambda shop_id: self.stores.get(shop_id) or {"error": f"no shop {shop_id}"})
        self._add(_schema("create_instore_product_order", "Create an unpaid in-store product order.", ("shop_id", "items"), shop_id=STR, items=ITEMS),
                  self.create_instore_order)
        self._add(_schema("pay_instore_order", "Pay an unpaid in-store order.", ("order_id",), order_id=STR),
                  lambda order_id: self._set_status("orders", order_id, (UNPAID,), PAID))
        self._add(_schema("instore_cancel_order", "Cancel an in-store order.", ("order_id",), order_id=STR),
                  lambda order_id: self._set_status("orders", order_id, (UNPAID, PAID), CANCELLED))
        self._add(_schema("instore_book", "Book a table/slot at a shop that takes bookings (unpaid deposit).", ("shop_id", "book_time", "customer_count"),
                          shop_id=STR, book_time=STR, customer_count=INT), self.instore_book)
        self._add(_schema("pay_instore_book", "Pay a booking's deposit.", ("book_id",), book_id=STR),
                  lambda book_id: self._set_status("books", book_id, (UNPAID,), PAID))
        self._add(_schema("instore_cancel_book", "Cancel a booking.", ("book_id",), book_id=STR),
                  lambda book_id: self._set_status("books", book_id, (UNPAID, PAID, UNCONSUMED), CANCELLED))
        self._add(_schema("instore_reservation", "Reserve a visit at a shop that takes reservations.", ("shop_id", "reservation_time", "customer_count"),
                          shop_id=STR, reservation_time=STR, customer_count=INT), self.instore_reservation)
        self._add(_schema("instore_modify_reservation", "Change a reservation's time or party size.", ("reservation_id",),
                          reservation_id=STR, reservation_time=STR, customer_count=INT), self.modify_reservation)
        self._add(_schema("instore_cancel_reservation", "Cancel a reservation.", ("reservation_id",), reservation_id=STR),
                  lambda reservation_id: self._set_status("reservations", reservation_id, (PAID, UNCONSUMED, UNPAID), CANCELLED))
        self._add(_schema("get_instore_orders", "The user's in-store orders."), lambda: list(self.db["orders"].values()))
        self._add(_schema("get_instore_books", "The user's bookings."), lambda: list(self.db["books"].values()))
        self._add(_schema("get_instore_reservations", "The user's reservations."), lambda: list(self.db["reservations"].values()))

    def create_instore_order(self, shop_id: str, items: list[dict[str, Any]]) -> Any:
        """Create an unpaid in-store product order."""
        lines = self._order_lines(shop_id, items)
        if isinstance(lines, dict):
            return lines
        return self._new_order("instore", shop_id, lines)

    def instore_book(self, shop_id: str, book_time: str, customer_count: int) -> Any:
        """Book at a shop; the deposit is the shop's ``book_price``."""
        shop = self.stores.get(shop_id)
        if shop is None:
            return {"error": f"no shop {shop_id}"}
        if shop.get("enable_book") is False:
            return {"error": f"{shop_id} does not take bookings"}
        book_id = self._new_id()
        self.db["books"][book_id] = {"book_id": book_id, "shop_id": shop_id, "book_time": book_time, "book_price": shop.get("book_price", 0),
                                     "customer_id": self.db.get("user_id"), "customer_count": customer_count, "status": UNPAID, "update_time": self.now}
        return self.db["books"][book_id]

    def instore_reservation(self, shop_id: str, reservation_time: str, customer_count: int) -> Any:
        """Reserve at a shop; reservations need no payment."""
        shop = self.stores.get(shop_id)
        if shop is None:
            return {"error": f"no shop {shop_id}"}
        if shop.get("enable_reservation") is False:
            return {"error": f"{shop_id} does not take reservations"}
        rid = self._new_id()
        self.db["reservations"][rid] = {"reservation_id": rid, "shop_id": shop_id, "reservation_time": reservation_time,
                                        "customer_id": self.db.get("user_id"), "customer_count": customer_count, "status": UNCONSUMED, "update_time": self.now}
        return self.db["reservations"][rid]

    def modify_reservation(self, reservation_id: str, reservation_time: str | None = None, customer_count: int | None = None) -> Any:
        """Change an active reservation."""
        record = self._record("reservations", reservation_id)
        if record is None or record.get("status") == CANCELLED:
            return {"error": f"reservation {reservation_id} cannot be modified"}
        if reservation_time is not None:
            record["reservation_time"] = reservation_time
        if customer_count is not None:
            record["customer_count"] = customer_count
        record["update_time"] = self.now
        return record

"""VitaBench's tools (delivery, in-store and the generic ones), as upstream's toolkits behave.

Re-implemented from upstream's behaviour (meituan-longcat/vitabench @ 96f3b85), checked by
``tests/conformance/test_vitabench.py`` against result strings recorded from upstream:

* the same tool names, parameters and defaults (the agent passes the user id itself; product
  orders take parallel ``product_ids``/``product_cnts`` lists; times are ``%Y-%m-%d %H:%M:%S``);
* the same checks in the same order (the user id must be the task's user, the dispatch time
  may not lie before the task's clock, the shop must take bookings, ...); a failed check is
  answered with its message as a plain result, any other failure with ``Error: <message>``,
  including Python's own message for missing or unexpected arguments (the toolkit classes
  carry upstream's class names so those messages read the same);
* results are the records' text forms (:mod:`.records`); numbers and lists are answered as
  upstream's environment serialises them (``str(number)``, JSON lists of strings);
* searches rank with thefuzz's ``partial_ratio`` over the same texts (store name plus tags,
  ...), address and weather look-ups use its score thresholds; the product and address
  look-ups read registries filled as upstream's are (a new delivery order's lines replace the
  catalogue entries of their products; an ordered address becomes a known address; an
  in-store order shares the shop's product record, so its quantity is the last one ordered).

New records get ids of upstream's shape (``OT``/``OI`` and ten hex digits), derived from the
task id and a counter instead of upstream's clock (upstream's ids are not reproducible).
Upstream's registries live per worker thread and outlive a task; here they hold exactly the
current task's records (upstream with its registries cleared).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from datetime import date, datetime, timedelta
from typing import Any, Callable

import holidays
from thefuzz import fuzz, process

from agentgym_suite.envs.vitabench.holiday_dates import HOLIDAY_DATES
from agentgym_suite.envs.vitabench.records import (
    TRAVEL_TABLES,
    BookInfo,
    Location,
    Order,
    ReservationInfo,
    StoreProduct,
    typed_database,
)
from agentgym_suite.envs.vitabench.tool_schemas import tool_schemas

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _tool(method: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a toolkit method as a tool: a failed check (``AssertionError``) becomes its answer."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except AssertionError as exc:
            return str(exc)

    wrapper.is_tool = True  # type: ignore[attr-defined]
    return wrapper


def _time_ok(text: Any, fmt: str = TIME_FORMAT) -> bool:
    try:
        datetime.strptime(text, fmt)
        return True
    except ValueError:
        return False


def rerank(query: str, docs: dict[str, str], with_score: bool = False) -> list[tuple[Any, ...]]:
    """Document ids ordered by thefuzz ``partial_ratio`` of their text to ``query`` (best first).

    Texts shared by several ids all resolve to the last of those ids, as upstream's look-up
    table does.
    """
    owner = {text: key for key, text in docs.items()}
    ranked = process.extract(query, list(docs.values()), limit=None, scorer=fuzz.partial_ratio)
    return [(owner[text], text, score) if with_score else (owner[text], text) for text, score in ranked]


def serialise(result: Any) -> Any:
    """A tool's return value as upstream's environment hands it to the agent."""

    def walk(value: Any) -> Any:
        if isinstance(value, (str, type(None))):
            return value
        if isinstance(value, (bool, int, float)):
            return str(value)
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (datetime, date)):
            return value.isoformat()
        raise ValueError(f"Unsupported type: {type(value)}")

    return result if isinstance(result, str) else json.dumps(walk(result), default=str, ensure_ascii=False)


class ToolKitBase:
    """The generic tools every domain has, over a typed database (:func:`.records.typed_database`)."""

    domain = ""
    id_prefix = "O"

    HIDDEN_IN_V2 = ("get_user_historical_behaviors",)
    """Tools VitaBench 2.0 no longer offers (its toolkit comments the user's history tool out)."""

    def __init__(self, task_id: str, environment: dict[str, Any], language: str = "english", version: int = 1) -> None:
        self.task_id = task_id
        self.language = language
        self.version = version
        self.db = self._database(environment)
        self._counter = 0
        self.locations: dict[str, Location] = {}
        self.products: dict[str, dict[str, Any]] = {}
        for loc in self.db.get("location") or []:
            self.locations[loc["address"]] = loc
        for order in self.db["orders"].values():
            if isinstance(order.get("location"), Location):
                self.locations[order["location"]["address"]] = order["location"]
        for store in self.stores.values():
            for product in store["products"]:
                self.products[product["product_id"]] = product
            self.locations[store["location"]["address"]] = store["location"]
        for table in TRAVEL_TABLES:  # upstream registers every record's places, in its field order
            for record in (self.db.get(table) or {}).values():
                for field in type(record).locations:
                    self.locations[record[field]["address"]] = record[field]
        offered = set(self.tool_names())
        self.schemas = [s for s in tool_schemas(self.domain, language) if s["function"]["name"] in offered]
        self.handlers: dict[str, Callable[..., str | None]] = {
            s["function"]["name"]: functools.partial(self.call, s["function"]["name"]) for s in self.schemas}

    # ------------------------------------------------------------------ plumbing
    store_table = ""
    """The database table of this domain's stores (``stores``, ``shops``; none for OTA)."""

    @property
    def stores(self) -> dict[str, dict[str, Any]]:
        """This domain's delivery stores or in-store shops by id."""
        return (self.db.get(self.store_table) or {}) if self.store_table else {}

    def owner(self, tool: str) -> ToolKitBase:
        """The toolkit that runs ``tool`` (itself; a cross-domain toolkit answers with one of its parts)."""
        return self

    def _database(self, environment: dict[str, Any]) -> dict[str, Any]:
        return typed_database(environment, self.domain)

    def tool_names(self) -> list[str]:
        """The tools of this toolkit (in its benchmark version)."""
        hidden = self.HIDDEN_IN_V2 if self.version == 2 else ()
        return [name for name in dir(type(self)) if getattr(getattr(type(self), name), "is_tool", False) and name not in hidden]

    def call(self, name: str, **arguments: Any) -> str | None:
        """Run one call as upstream's environment does: unknown tools and failures become ``Error: ...``."""
        try:
            if name not in self.tool_names():
                raise ValueError(f"Tool '{name}' not found.")
            result = getattr(self, name)(**arguments)
        except Exception as exc:  # the agent sees the failure, as upstream's get_response shows it
            result = f"Error: {exc}"
        return serialise(result)

    def now(self) -> str:
        """The task's clock (the real clock when the task has none)."""
        return self.db.get("time") or datetime.now().strftime(TIME_FORMAT)

    def predict_id(self, counter: int) -> str:
        """The id the ``counter``-th new record of this task gets."""
        return self.id_prefix + hashlib.sha256(f"{self.task_id}/{counter}".encode()).hexdigest()[:10]

    def _new_id(self) -> str:
        self._counter += 1
        return self.predict_id(self._counter)

    def catalogue(self) -> dict[str, dict[str, Any]]:
        """The products the look-ups and searches read, by id.

        Version 1: upstream's product registry (every product registered, a later record with the
        same id replacing an earlier one; a delivery order's lines replace their catalogue entries).
        Version 2: the stores' or shops' own products as the database holds them now (upstream 2.0
        reads them there; the first product with an id wins).
        """
        if self.version == 1:
            return self.products
        found: dict[str, dict[str, Any]] = {}
        for store in self.stores.values():
            for product in store["products"]:
                found.setdefault(product["product_id"], product)
        return found

    def search_width(self) -> int:
        """How many hits a store or product search returns at most (upstream's ``top_k``)."""
        return 100

    def _catalogue_in_order(self) -> dict[str, dict[str, Any]]:
        """The products a product search ranks, keyed as upstream builds its search documents (version 2:
        store by store, a later product with the same id giving the text at the first one's place)."""
        if self.version == 1:
            return self.products
        docs: dict[str, dict[str, Any]] = {}
        for store in self.stores.values():
            for product in store["products"]:
                docs[product["product_id"]] = product
        return docs

    def _check_user(self, user_id: Any) -> bool:
        return user_id == self.db.get("user_id")

    def _write_back(self, table: str, record: dict[str, Any], id_field: str) -> bool:
        """Store a changed record under its own id, as upstream does; False when that id is not in the table.

        The change itself is already made (the record was edited in place), as upstream's is.
        """
        if record[id_field] not in self.db[table]:
            return False
        self.db[table][record[id_field]] = record
        return True

    # ------------------------------------------------------------------ generic tools
    @_tool
    def longitude_latitude_to_distance(self, longitude1: float, latitude1: float, longitude2: float, latitude2: float) -> float:
        if longitude1 == longitude2 and latitude1 == latitude2:
            return 0.0
        lon1, lat1, lon2, lat2 = map(math.radians, [longitude1, latitude1, longitude2, latitude2])
        h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
        return round(6371000 * 2 * math.asin(math.sqrt(h)), 0)

    @_tool
    def weather(self, address: str, date_start: str, date_end: str) -> str:
        assert _time_ok(date_start, "%Y-%m-%d"), f"Invalid date_start format. Expected yyyy-mm-dd, got: {date_start}"
        assert _time_ok(date_end, "%Y-%m-%d"), f"Invalid date_end format. Expected yyyy-mm-dd, got: {date_end}"
        rows = self.db["weather"]
        best = rerank(address, {w["city"]: w["city"] for w in rows}, True)[0]
        if best[-1] < 50:
            raise ValueError(f"Weather information not found for {address}")
        start = datetime.strptime(date_start, "%Y-%m-%d").date()
        end = datetime.strptime(date_end, "%Y-%m-%d").date()
        hits = [w for w in rows if w["city"] == best[0] and start <= datetime.strptime(w["datetime"], "%Y-%m-%d").date() <= end]
        if not hits:
            return f"No weather information found for {best[0]} between {date_start} and {date_end}"
        return "\n".join(repr(w) for w in sorted(hits, key=lambda w: w["datetime"]))

    @_tool
    def address_to_longitude_latitude(self, address: str) -> list[float]:
        best = rerank(address, {a: a for a in self.locations}, True)[0]
        if best[-1] < 30 or fuzz.ratio(address, best[0]) < 20:
            raise ValueError(f"Longitude and latitude not found for address {address}")
        found = self.locations[best[0]]
        return [found["longitude"], found["latitude"]]

    @_tool
    def get_date_holiday_info(self, date: str) -> str:
        assert _time_ok(date, "%Y-%m-%d"), f"Date format error, should be yyyy-mm-dd, actual: {date}"
        day = datetime.strptime(date, "%Y-%m-%d")
        name = holidays.China(years=day.year).get(day)
        return name if name is not None else f"Date {date} is not a holiday"

    @_tool
    def get_holiday_date(self, year: str, holiday_name: str) -> str:
        table = HOLIDAY_DATES["english" if self.language == "english" else "chinese"]
        if year not in table:
            return f"Holiday data for year {year} not found"
        ranked = process.extract(holiday_name, list(table[year]), limit=None, scorer=fuzz.partial_ratio)
        if ranked and ranked[0][1] >= 80:
            return table[year][ranked[0][0]]
        return f"Holiday named '{holiday_name}' not found in year {year}"

    @_tool
    def get_user_historical_behaviors(self) -> str:
        return str(self.db["user_historical_behaviors"])

    @_tool
    def get_user_all_orders(self) -> str:
        return "\n".join(repr(order) for order in self.db["orders"].values())

    @_tool
    def get_nearby(self, longitude: float, latitude: float, range: float) -> str:  # noqa: A002 - upstream's parameter name
        def near(place: dict[str, Any]) -> bool:
            return self.longitude_latitude_to_distance(longitude, latitude, place["longitude"], place["latitude"]) <= range

        hits = [str(place) for table in ("stores", "shops", "hotels", "attractions") for place in (self.db.get(table) or {}).values()
                if near(place["location"])]
        for table, ends in (("flights", ("departure_airport_location", "arrival_airport_location")),
                            ("trains", ("departure_station_location", "arrival_station_location"))):
            hits += [str(place) for place in (self.db.get(table) or {}).values() if near(place[ends[0]]) or near(place[ends[1]])]
        return "\n".join(hits) if hits else "No search results found"


class DeliveryTools(ToolKitBase):
    """Food delivery: stores, products and delivery orders."""

    domain = "delivery"
    id_prefix = "OT"
    store_table = "stores"

    def _store(self, store_id: str) -> dict[str, Any]:
        if store_id not in self.db["stores"]:
            raise ValueError(f"Store {store_id} not found")
        return self.db["stores"][store_id]

    def _product(self, product_id: str) -> dict[str, Any]:
        products = self.catalogue()
        if product_id not in products:
            raise ValueError(f"{product_id} not found")
        return products[product_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.db["orders"]:
            raise ValueError(f"Order {order_id} not found")
        order = self.db["orders"][order_id]
        if order["order_type"] != "delivery":
            raise ValueError(f"Order {order_id} is not a delivery order")
        return order

    @_tool
    def delivery_distance_to_time(self, distance: float) -> float:
        assert isinstance(distance, (float, int)), f"distance value type should be float or int, but get {type(distance)}"
        return round(25.00 + int(distance) * 0.006510, 0)

    @_tool
    def get_delivery_store_info(self, store_id: str) -> str:
        return repr(self._store(store_id))

    @_tool
    def get_delivery_product_info(self, product_id: str) -> str:
        return repr(self._product(product_id))

    @_tool
    def delivery_store_search_recommand(self, keywords: list[str]) -> str:
        docs = {s["store_id"]: s["name"] + ",".join(s["tags"]) for s in self.db["stores"].values()}  # keyed by the record's id
        return "\n".join(str(self._store(hit[0])) for hit in rerank("".join(keywords), docs)[:100])

    @_tool
    def delivery_product_search_recommand(self, keywords: list[str]) -> str:
        docs = {pid: f"{p['store_name']} {p['name']} {p['tags']}" for pid, p in self._catalogue_in_order().items()}
        return "\n".join(repr(self._product(hit[0])) for hit in rerank("".join(keywords), docs)[:100])

    @_tool
    def create_delivery_order(self, user_id: str, store_id: str, product_ids: list[str], product_cnts: list[int], address: str,
                              dispatch_time: str, attributes: list[str] | None = None, note: str | None = "") -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        assert store_id in self.db["stores"], f"Store {store_id} not found"
        assert all([self._product(pid) is not None for pid in product_ids]), f"products {product_ids} not found"
        assert address != "", f"Location {address} is empty"
        assert len(product_ids) == len(product_cnts) and all([cnt > 0 for cnt in product_cnts]), f"product_cnts {product_cnts} list is invalid"
        assert dispatch_time and _time_ok(dispatch_time), f"dispatch_time {dispatch_time} time format is invalid, yyyy-mm-dd HH:MM:SS required"
        assert datetime.strptime(dispatch_time, TIME_FORMAT) >= datetime.strptime(self.now(), TIME_FORMAT), \
            f"dispatch_time {dispatch_time} must be in the future"
        products = [self._product(pid) for pid in product_ids]
        store = self._store(store_id)
        longitude, latitude = self.address_to_longitude_latitude(address)
        distance = self.longitude_latitude_to_distance(longitude, latitude, store["location"]["longitude"], store["location"]["latitude"])
        shipping = self.delivery_distance_to_time(distance)
        delivered = (datetime.strptime(dispatch_time, TIME_FORMAT) + timedelta(minutes=shipping)).strftime(TIME_FORMAT)
        total = sum([p["price"] * cnt for p, cnt in zip(products, product_cnts)])
        line_attributes = [""] * len(products)
        for i, attr in enumerate((attributes if attributes is not None else [])[:len(products)]):
            if attr:
                line_attributes[i] = attr
        lines = []
        for product, cnt, attr in zip(products, product_cnts, line_attributes):
            line = StoreProduct.of({**product, "quantity": cnt, "attributes": attr})
            self.products[line["product_id"]] = line  # upstream's catalogue now returns the ordered line
            lines.append(line)
        location = Location.of({"address": address, "longitude": longitude, "latitude": latitude})
        self.locations[address] = location
        order = Order.of({"order_id": self._new_id(), "order_type": "delivery", "user_id": user_id, "store_id": store_id,
                          "location": location, "dispatch_time": dispatch_time, "shipping_time": shipping, "delivery_time": delivered,
                          "total_price": total, "create_time": self.now(), "update_time": self.now(), "note": note,
                          "products": lines, "status": "unpaid"})
        order["location"] = location
        self.db["orders"][order["order_id"]] = order
        return repr(order)

    @_tool
    def pay_delivery_order(self, order_id: str) -> str:
        order = self._order(order_id)
        if order["status"] != "unpaid":
            return "Order is not in `unpaid` status."
        order["status"] = "paid"
        self._write_back("orders", order, "order_id")
        return "Payment successful"

    @_tool
    def get_delivery_order_status(self, order_id: str) -> str:
        return self._order(order_id)["status"]

    @_tool
    def cancel_delivery_order(self, order_id: str) -> str:
        order = self._order(order_id)
        assert order["status"] not in ["cancelled"], f"Order {order_id} is already cancelled"
        order["status"] = "cancelled"
        if not self._write_back("orders", order, "order_id"):
            return "Order not found"
        return f"Order {order['order_id']} has been cancelled."

    @_tool
    def modify_delivery_order(self, order_id: str, note: str) -> str:
        order = self._order(order_id)
        order["note"] = note
        if not self._write_back("orders", order, "order_id"):
            return "Order not found"
        return f"Order {order['order_id']} has been modified."

    @_tool
    def search_delivery_orders(self, user_id: str, status: str | None = "unpaid") -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        hits = [o for o in self.db["orders"].values()
                if o["order_type"] == "delivery" and o["status"] == status and o["user_id"] == user_id]
        return "\n".join(str(o) for o in hits) if hits else "No delivery orders available"

    @_tool
    def get_delivery_order_detail(self, order_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        return repr(self._order(order_id))


class InStoreTools(ToolKitBase):
    """In-store services: shops, product orders (vouchers), table bookings and reservations."""

    domain = "instore"
    id_prefix = "OI"
    store_table = "shops"

    def _shop(self, shop_id: str) -> dict[str, Any]:
        if shop_id not in self.db["shops"]:
            raise ValueError(f"Shop {shop_id} does not exist")
        return self.db["shops"][shop_id]

    def search_width(self) -> int:
        """Upstream's ``top_k`` of the in-store searches: 1000 in version 1, 100 in 2.0."""
        return 1000 if self.version == 1 else 100

    def _product(self, product_id: str) -> dict[str, Any]:
        products = self.catalogue()
        if product_id not in products:
            raise ValueError(f"Product {product_id} does not exist")
        return products[product_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.db["orders"]:
            raise ValueError(f"Order {order_id} not found")
        order = self.db["orders"][order_id]
        if order["order_type"] != "instore":
            raise ValueError(f"Order {order_id} is not an instore order")
        return order

    def _record(self, table: str, label: str, record_id: str) -> dict[str, Any]:
        if record_id not in self.db[table]:
            raise ValueError(f"{label} {record_id} not found")
        return self.db[table][record_id]

    @_tool
    def instore_shop_search_recommend(self, keywords: list[str]) -> str:
        docs = {s["shop_id"]: s["shop_name"] + "," + ",".join(s["tags"]) for s in self.db["shops"].values()}  # keyed by the record's id
        return "\n".join(str(self._shop(hit[0])) for hit in rerank("".join(keywords), docs)[:self.search_width()])

    @_tool
    def instore_product_search_recommend(self, keywords: list[str]) -> str:
        docs = {pid: p["name"] + "," + ",".join(p["tags"]) for pid, p in self._catalogue_in_order().items()}
        return "\n".join(repr(self._product(hit[0])) for hit in rerank("".join(keywords), docs)[:self.search_width()])

    @_tool
    def create_instore_product_order(self, user_id: str, shop_id: str, product_id: str, quantity: int = 1) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        assert shop_id in self.db["shops"], "Shop does not exist"
        assert product_id in [p["product_id"] for p in self._shop(shop_id)["products"]], "Product does not exist"
        assert quantity > 0, "Quantity must be greater than 0"
        product = self._product(product_id)
        product["quantity"] = quantity  # upstream sets it on the catalogue's record, which the order shares
        order = Order.of({"order_id": self._new_id(), "order_type": "instore", "user_id": user_id, "store_id": shop_id,
                          "total_price": quantity * product["price"], "create_time": self.now(), "update_time": self.now(),
                          "status": "unpaid"})
        order["products"] = [product]
        self.db["orders"][order["order_id"]] = order
        return repr(order)

    @_tool
    def pay_instore_order(self, order_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        order = self._order(order_id)
        if order["status"] != "unpaid":
            return f"Order {order_id} is not in `unpaid` status."
        order["status"], order["update_time"] = "paid", self.now()
        self._write_back("orders", order, "order_id")
        return "Payment successful"

    @_tool
    def instore_cancel_order(self, order_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        order = self._order(order_id)
        if order["status"] in ["cancelled"]:
            return f"Order {order['order_id']} is already cancelled."
        order["status"], order["update_time"] = "cancelled", self.now()
        if not self._write_back("orders", order, "order_id"):
            return f"Order {order['order_id']} not found"
        return f"Order {order['order_id']} is cancelled."

    @_tool
    def instore_book(self, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        assert shop_id in self.db["shops"], "Shop does not exist"
        assert customer_count > 0, "Number of customers for table booking must be greater than 0"
        assert time, "Table booking time cannot be empty"
        assert _time_ok(time), "Table booking time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"
        shop = self.db["shops"][shop_id]
        assert shop["enable_book"], "Shop does not support table booking"
        book = BookInfo.of({"book_id": self._new_id(), "shop_id": shop_id, "book_time": time, "customer_count": customer_count,
                            "book_price": shop["book_price"], "customer_id": user_id,
                            "status": "unpaid" if shop["book_price"] > 0 else "paid", "update_time": self.now()})
        self.db["books"][book["book_id"]] = book
        return repr(book)

    @_tool
    def pay_instore_book(self, book_id: str) -> str:
        assert book_id, "Booking ID cannot be empty"
        book = self._record("books", "BookInfo", book_id)
        if book["status"] != "unpaid":
            return f"BookInfo {book['book_id']} is not in `unpaid` status."
        book["status"], book["update_time"] = "paid", self.now()
        if not self._write_back("books", book, "book_id"):
            return f"BookInfo {book['book_id']} not found"
        return "Payment successful"

    @_tool
    def instore_cancel_book(self, book_id: str) -> str:
        assert book_id, "Booking ID cannot be empty"
        book = self._record("books", "BookInfo", book_id)
        if book["status"] in ["cancelled"]:
            return f"BookInfo {book['book_id']} is already cancelled."
        book["status"], book["update_time"] = "cancelled", self.now()
        if not self._write_back("books", book, "book_id"):
            return f"BookInfo {book['book_id']} not found"
        return f"BookInfo {book['book_id']} is cancelled."

    @_tool
    def instore_reservation(self, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        assert shop_id in self.db["shops"], "Shop does not exist"
        assert _time_ok(time), "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"
        assert customer_count > 0, "Number of customers for reservation must be greater than 0"
        reservation = ReservationInfo.of({"reservation_id": self._new_id(), "shop_id": shop_id, "reservation_time": time,
                                          "customer_id": user_id, "customer_count": customer_count, "status": "unconsumed",
                                          "update_time": self.now()})
        self.db["reservations"][reservation["reservation_id"]] = reservation
        return repr(reservation)

    @_tool
    def instore_modify_reservation(self, reservation_id: str, time: str, customer_count: int = 0) -> str:
        assert reservation_id, "Reservation ID cannot be empty"
        reservation = self._record("reservations", "ReservationInfo", reservation_id)
        if reservation["status"] in ["consumed", "cancelled"]:
            return f"ReservationInfo {reservation['reservation_id']} is already {reservation['status']}."
        assert customer_count >= 0, "Number of customers for reservation must be greater than or equal to 0"
        assert time, "Reservation time cannot be empty"
        assert _time_ok(time), "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S"
        reservation.update(reservation_time=time, customer_count=customer_count, update_time=self.now())
        if not self._write_back("reservations", reservation, "reservation_id"):
            return f"ReservationInfo {reservation['reservation_id']} not found"
        return repr(reservation)

    @_tool
    def instore_cancel_reservation(self, reservation_id: str) -> str:
        assert reservation_id, "Reservation ID cannot be empty"
        reservation = self._record("reservations", "ReservationInfo", reservation_id)
        if reservation["status"] in ["cancelled"]:
            return f"ReservationInfo {reservation['reservation_id']} is already cancelled."
        reservation["status"], reservation["update_time"] = "cancelled", self.now()
        if not self._write_back("reservations", reservation, "reservation_id"):
            return f"ReservationInfo {reservation['reservation_id']} not found"
        return f"ReservationInfo {reservation['reservation_id']} is cancelled."

    def _user_records(self, user_id: str, table: str, owner: str, noun: str) -> str:
        hits = [r for r in self.db[table].values() if (table != "orders" or r["order_type"] == "instore") and r[owner] == user_id]
        return "\n".join(repr(r) for r in hits) if hits else f"User {user_id} has no {noun} information."

    @_tool
    def get_instore_orders(self, user_id: str) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        return self._user_records(user_id, "orders", "user_id", "order")

    @_tool
    def get_instore_reservations(self, user_id: str) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        return self._user_records(user_id, "reservations", "customer_id", "reservation")

    @_tool
    def get_instore_books(self, user_id: str) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        return self._user_records(user_id, "books", "customer_id", "book")

    @_tool
    def search_instore_book(self, user_id: str, book_id: str | None = None) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        if book_id is None:
            return self._user_records(user_id, "books", "customer_id", "book")
        book = self._record("books", "BookInfo", book_id)
        if book["customer_id"] != user_id:
            return f"BookInfo {book_id} is not belong to user {user_id}."
        return repr(book)

    @_tool
    def search_instore_reservation(self, user_id: str, reservation_id: str | None = None) -> str:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        if reservation_id is None:
            return self._user_records(user_id, "reservations", "customer_id", "reservation")
        reservation = self._record("reservations", "ReservationInfo", reservation_id)
        if reservation["customer_id"] != user_id:
            return f"ReservationInfo {reservation_id} is not belong to user {user_id}."
        return repr(reservation)


from agentgym_suite.envs.vitabench.ota_tools import OTATools  # noqa: E402 - it builds on ToolKitBase above

TOOLKITS: dict[str, type[ToolKitBase]] = {"delivery": DeliveryTools, "instore": InStoreTools, "ota": OTATools}


def VitaTools(task_id: str, domain: str, environment: dict[str, Any], language: str = "english",  # noqa: N802 - kept name
              version: int = 1) -> ToolKitBase:
    """The toolkit of ``domain`` over a copy of a task's ``environment``, with the tools of the
    benchmark ``version`` (2.0 adds the taxi tools and drops ``get_user_historical_behaviors``)."""
    parts = domain.split(",")
    unknown = [d for d in parts if d not in TOOLKITS]
    if unknown:
        raise ValueError(f"VitaBench has no tools for the {unknown[0]!r} domain here; choose from {sorted(TOOLKITS)} "
                         "(several, comma-separated, for a cross-domain task).")
    if len(parts) > 1:
        from agentgym_suite.envs.vitabench.cross_domain import CrossDomainTools

        return CrossDomainTools(task_id, parts, environment, language, version)  # type: ignore[return-value]
    return TOOLKITS[domain](task_id, environment, language, version)

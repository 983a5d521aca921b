"""VitaBench's OTA (travel) tools: hotels, attractions, flights, trains and, in 2.0, taxis.

Re-implemented from upstream's behaviour (``vita.domains.ota.tools`` of meituan-longcat/vitabench
@ 96f3b85 and of meituan-longcat/VitaBench-2.0 @ f60169e, which adds the seven taxi tools), checked
by ``tests/conformance/test_vitabench_ota.py`` against result strings and final databases recorded
from both. What upstream does, and so what this toolkit does:

* checks run in upstream's order and a failed one answers with its message; a missing record
  answers ``Error: <kind> <id> not found``;
* creating an order takes one unit (a room; tickets, seats or rides: ``quantity``) from the
  record's inventory; a hotel order for a room id the hotel lacks is still created, empty and
  free; modifying a train or flight order moves its seats to another date of the same seat type
  (the order is unpaid again when the new date costs more);
* payment tools look the order up by id whatever its type; cancellations check the caller's
  user id, not the order's owner; order searches with a ``date`` only see orders whose products
  were typed by a tool (orders of the task's own database keep raw products without a date);
* a taxi order can never be created in 2.0 (upstream's id assignment knows no taxi scenario: the
  ride is taken from the inventory, then the call fails with ``Unsupported scenario type: taxi``),
  and printing a taxi order fails with ``'taxi'`` (upstream's order text has no taxi label).

New orders get ids of upstream's shape (``OO`` and ten hex digits), derived from the task id and
a counter instead of upstream's clock.
"""

from __future__ import annotations

from typing import Any

from thefuzz import fuzz

from agentgym_suite.envs.vitabench.records import (
    TRAVEL_TABLES,
    AttractionProduct,
    FlightProduct,
    HotelProduct,
    Order,
    TaxiProduct,
    TrainProduct,
    TravelProduct,
)
from agentgym_suite.envs.vitabench.tools import ToolKitBase, _time_ok, _tool, rerank

DAY = "%Y-%m-%d"
TAXI_TOOLS = ("get_taxi_info", "taxi_search", "create_taxi_order", "pay_taxi_order", "cancel_taxi_order", "search_taxi_order",
              "get_taxi_order_detail")
"""Tools VitaBench 2.0 added; version 1 has no taxis."""
OTA_ORDER_TYPES = ("hotel", "attraction", "flight", "train", "taxi")


def _near(query: str, text: str) -> bool:
    """Upstream's fuzzy place match (``partial_ratio`` of at least 40)."""
    return fuzz.partial_ratio(query, text) >= 40


def _date_ok(text: Any) -> bool:
    return _time_ok(text, DAY)


def _field(product: Any, name: str) -> Any:
    """A product field, from a typed product or a raw one (upstream reads both)."""
    return product.get(name)


class OTATools(ToolKitBase):
    """Travel booking over the task's hotels, attractions, flights, trains and taxis."""

    domain = "ota"
    id_prefix = "OO"

    def _database(self, environment: dict[str, Any]) -> dict[str, Any]:
        db = super()._database(environment)
        if self.version == 1:  # version 1's database has no taxi table
            del db["taxis"]
        return db

    def tool_names(self) -> list[str]:
        """The OTA tools of this benchmark version (the taxi tools are 2.0's)."""
        names = super().tool_names()
        return names if self.version == 2 else [n for n in names if n not in TAXI_TOOLS]

    # ------------------------------------------------------------------ look-ups
    def _record(self, table: str, kind: str, record_id: str) -> dict[str, Any]:
        records = self.db.get(table) or {}
        if record_id not in records:
            raise ValueError(f"{kind} {record_id} not found")
        return records[record_id]

    def _order(self, order_id: str) -> Order:
        if order_id not in self.db["orders"]:
            raise ValueError(f"Order {order_id} not found")
        return self.db["orders"][order_id]

    def _orders_of_type(self, order_type: str) -> list[Order]:
        return [o for o in self.db["orders"].values() if o["order_type"] == order_type]

    def _info(self, table: str, kind: str, label: str, record_id: str) -> str:
        try:
            return f"{label} Info:\n{self._record(table, kind, record_id)!r}"
        except ValueError as exc:
            return f"Error: {exc}"

    def _create(self, order_type: str, user_id: str, store_id: str, lines: list[TravelProduct], total: float) -> str:
        if order_type == "taxi":
            raise ValueError("Unsupported scenario type: taxi")
        order = Order.of({"order_id": self._new_id(), "order_type": order_type, "user_id": user_id, "store_id": store_id,
                          "total_price": total, "create_time": self.now(), "update_time": self.now(), "status": "unpaid"})
        order["products"] = lines
        self.db["orders"][order["order_id"]] = order
        return repr(order)

    # ------------------------------------------------------------------ records
    @_tool
    def get_ota_hotel_info(self, hotel_id: str) -> str:
        assert hotel_id, "Hotel ID cannot be empty"
        return self._info("hotels", "hotel", "Hotel", hotel_id)

    @_tool
    def get_ota_attraction_info(self, attraction_id: str) -> str:
        assert attraction_id, "Attraction ID cannot be empty"
        return self._info("attractions", "attraction", "Attraction", attraction_id)

    @_tool
    def get_ota_flight_info(self, flight_id: str) -> str:
        assert flight_id, "Flight ID cannot be empty"
        return self._info("flights", "flight", "Flight", flight_id)

    @_tool
    def get_ota_train_info(self, train_id: str) -> str:
        assert train_id, "Train ID cannot be empty"
        return self._info("trains", "train", "Train", train_id)

    @_tool
    def get_taxi_info(self, taxi_id: str) -> str:
        assert taxi_id, "Taxi ID cannot be empty"
        return self._info("taxis", "taxi", "Taxi", taxi_id)

    # ------------------------------------------------------------------ searches
    @_tool
    def hotel_search_recommand(self, city_name: str, key_words: list[str] | None = None) -> str:
        hotels = [h for h in self.db["hotels"].values() if _near(city_name, h["location"]["address"])]
        if not hotels:
            return "No hotels found matching the criteria. Please check if the city name is correct and try again."
        docs = {h["hotel_id"]: h["hotel_name"] + ",".join(h["tags"]) for h in hotels}
        return "\n".join(str(self._record("hotels", "hotel", hit[0])) for hit in rerank("".join(key_words or []), docs)[:100])

    @_tool
    def attractions_search_recommend(self, city_name: str, key_words: list[str]) -> str:
        places = [a for a in self.db["attractions"].values() if _near(city_name, a["location"]["address"])]
        if not places:
            return "No attractions found matching the criteria. Please check if the city name is correct and try again."
        docs = {a["attraction_id"]: f"{a['attraction_name']},{a['description']},{a['location']['address']}" for a in places}
        return "\n".join(str(self._record("attractions", "attraction", hit[0])) for hit in rerank("".join(key_words), docs)[:100])

    @_tool
    def flight_search_recommend(self, departure: str, destination: str) -> str:
        assert departure, "Departure city cannot be empty"
        assert destination, "Destination city cannot be empty"
        hits = [str(f) for f in self.db["flights"].values() if _near(departure, f["departure_city"]) and _near(destination, f["arrival_city"])]
        return "\n".join(hits) if hits else "No flights found matching the criteria"

    @_tool
    def train_ticket_search(self, departure: str, destination: str, date: str) -> str:
        assert departure, "Departure city cannot be empty"
        assert destination, "Destination city cannot be empty"
        assert date, "Departure date cannot be empty"
        assert _date_ok(date), "Date format is incorrect, correct format is %Y-%m-%d"
        hits = [str(train) for train in self.db["trains"].values() for product in train["products"]  # once per product of that date
                if product["date"] == date and _near(departure, train["departure_city"]) and _near(destination, train["arrival_city"])]
        return "\n".join(hits) if hits else "No trains found matching the criteria"

    @_tool
    def taxi_search(self, departure_location: str, arrival_location: str) -> str:
        assert departure_location, "Departure location cannot be empty"
        assert arrival_location, "Arrival location cannot be empty"
        taxis = list(self.db["taxis"].values())
        hits = [t for t in taxis if _near(departure_location, t["departure_location"]["address"])
                and _near(arrival_location, t["arrival_location"]["address"])] or taxis  # upstream falls back to every taxi
        return "\n".join(str(t) for t in hits) if hits else "No taxi services found matching the criteria"

    # ------------------------------------------------------------------ creating orders
    def _check_caller(self, user_id: str) -> None:
        assert user_id, "User ID cannot be empty"
        assert self._check_user(user_id), "User ID does not match"

    @_tool
    def create_hotel_order(self, hotel_id: str, room_id: str, user_id: str) -> str:
        assert hotel_id, "Hotel ID cannot be empty"
        self._check_caller(user_id)
        hotel = self._record("hotels", "hotel", hotel_id)
        rooms = []
        for product in hotel["products"]:
            if product["product_id"] == room_id:
                if product["quantity"] <= 0:
                    return "No available rooms at the moment"
                product["quantity"] = product["quantity"] - 1
                rooms.append(HotelProduct.of({**product, "quantity": 1}))
                break
        return self._create("hotel", user_id, hotel_id, rooms, sum([room["price"] for room in rooms]))

    def _dated_order(self, order_type: str, table: str, kind: str, record_id: str, product_id: str, user_id: str, date: str,
                     quantity: int, product_type: type[TravelProduct], missing: str, short: str) -> str:
        record = self._record(table, kind, record_id)
        target = next((p for p in record["products"] if p["date"] == date and p["product_id"] == product_id), None)
        if target is None:
            return missing
        if target["quantity"] < quantity:
            return short
        target["quantity"] = target["quantity"] - quantity
        line = product_type.of({**target, "date": date, "quantity": quantity})
        return self._create(order_type, user_id, record_id, [line], sum([line["price"] * line["quantity"]]))

    @_tool
    def create_attraction_order(self, attraction_id: str, ticket_id: str, user_id: str, date: str, quantity: int) -> str:
        assert attraction_id, "Attraction ID cannot be empty"
        assert ticket_id, "Ticket ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert quantity > 0, "Booking quantity must be greater than 0"
        assert self._check_user(user_id), "User ID does not match"
        return self._dated_order("attraction", "attractions", "attraction", attraction_id, ticket_id, user_id, date, quantity,
                                 AttractionProduct, "The attraction does not have the specified ticket on the specified date",
                                 "Insufficient ticket inventory for the specified date")

    @_tool
    def create_flight_order(self, flight_id: str, seat_id: str, user_id: str, date: str, quantity: int) -> str:
        assert flight_id, "Flight ID cannot be empty"
        assert seat_id, "Seat ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert quantity > 0, "Booking quantity must be greater than 0"
        assert self._check_user(user_id), "User ID does not match"
        return self._dated_order("flight", "flights", "flight", flight_id, seat_id, user_id, date, quantity, FlightProduct,
                                 "The flight does not have the specified seat on the specified date",
                                 "Insufficient seat inventory for the specified date")

    @_tool
    def create_train_order(self, train_id: str, seat_id: str, user_id: str, date: str, quantity: int) -> str:
        assert train_id, "Train ID cannot be empty"
        assert seat_id, "Seat ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert quantity > 0, "Booking quantity must be greater than 0"
        assert self._check_user(user_id), "User ID does not match"
        return self._dated_order("train", "trains", "train", train_id, seat_id, user_id, date, quantity, TrainProduct,
                                 "The train does not have the specified seat on the specified date",
                                 "Insufficient seat inventory for the specified date")

    @_tool
    def create_taxi_order(self, taxi_id: str, product_id: str, user_id: str, quantity: int = 1) -> str:
        assert taxi_id, "Taxi ID cannot be empty"
        assert product_id, "Product ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert quantity > 0, "Booking quantity must be greater than 0"
        assert self._check_user(user_id), "User ID does not match"
        taxi = self._record("taxis", "taxi", taxi_id)
        target = next((p for p in taxi["products"] if p["product_id"] == product_id), None)
        if target is None:
            return "The taxi service does not have the specified product"
        if target["quantity"] < quantity:
            return "Insufficient taxi service availability"
        target["quantity"] -= quantity
        line = TaxiProduct.of({**target, "quantity": quantity})
        return self._create("taxi", user_id, taxi_id, [line], line["price"] * quantity)

    # ------------------------------------------------------------------ paying, cancelling
    def _pay(self, order_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        order = self._order(order_id)  # any order type, as upstream
        if order["status"] != "unpaid":
            return "Order status must be unpaid"
        order["status"], order["update_time"] = "paid", self.now()
        return "Payment successful" if self._write_back("orders", order, "order_id") else "Order not found"

    @_tool
    def pay_hotel_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @_tool
    def pay_attraction_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @_tool
    def pay_flight_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @_tool
    def pay_train_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @_tool
    def pay_taxi_order(self, order_id: str) -> str:
        return self._pay(order_id)

    def _cancel(self, order_type: str, order_id: str, user_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        self._check_caller(user_id)
        order = self._order(order_id)
        assert order["order_type"] == order_type, f"Order type is not {'an' if order_type == 'attraction' else 'a'} {order_type} order"
        assert order["status"] not in ["cancelled"], "Order is already in cancelled status"
        refund = order["total_price"] if order["status"] == "paid" else 0
        order["status"], order["update_time"] = "cancelled", self.now()
        if not self._write_back("orders", order, "order_id"):
            return "Cancellation failed, Order not found"
        return f"Cancellation successful, refund amount: {refund}"

    @_tool
    def cancel_hotel_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("hotel", order_id, user_id)

    @_tool
    def cancel_attraction_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("attraction", order_id, user_id)

    @_tool
    def cancel_flight_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("flight", order_id, user_id)

    @_tool
    def cancel_train_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("train", order_id, user_id)

    @_tool
    def cancel_taxi_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("taxi", order_id, user_id)

    # ------------------------------------------------------------------ modifying
    def _move(self, order: Order, table: str, product_type: type[TravelProduct], new_date: str) -> str:
        """Move a one-line train or flight order to ``new_date`` (same seat type); upstream's arithmetic."""
        old = order["products"][0]
        seat_type, quantity = _field(old, "seat_type"), _field(old, "quantity")
        record = self.db[table][order["store_id"]]
        new = next((p for p in record["products"] if p["date"] == new_date and p["seat_type"] == seat_type), None)
        assert new is not None, f"New date {new_date} does not have {seat_type} type seats"
        assert new["quantity"] >= quantity, f"Insufficient {seat_type} seat inventory for new date {new_date}"
        for product in record["products"]:
            if product["date"] == _field(old, "date") and product["seat_type"] == seat_type:
                product["quantity"] += quantity
                break
        new["quantity"] -= quantity
        diff = new["price"] * quantity - _field(old, "price") * quantity
        if diff > 0:
            order["status"] = "unpaid"
        order["products"] = [product_type.of({**new, "date": new_date, "seat_type": seat_type, "quantity": quantity})]
        order["total_price"] = new["price"] * quantity
        order["update_time"] = self.now()
        if not self._write_back("orders", order, "order_id"):
            return "Modification failed, Order not found"
        if diff > 0:
            return f"Modification successful, need to pay additional amount: {diff}, please pay as soon as possible"
        return f"Modification successful, price difference: {diff}, refunded"

    @_tool
    def modify_train_order(self, order_id: str, user_id: str, new_date: str) -> str:
        assert order_id, "Order ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert new_date, "New departure date cannot be empty"
        assert self._check_user(user_id), "User ID does not match"
        assert _date_ok(new_date), "Date format is incorrect, correct format is %Y-%m-%d"
        assert self._order(order_id), "Order does not exist"
        order = self._order(order_id)
        assert order["order_type"] == "train", "Order type is not a train order"
        assert order["user_id"] == user_id, f"Order {order_id} does not belong to user {user_id}"
        assert order["status"] == "paid", f"Only paid orders can be modified, current status: {order['status']}"
        assert len(order["products"]) == 1, "Only single train ticket order modification is supported"
        return self._move(order, "trains", TrainProduct, new_date)

    @_tool
    def modify_flight_order(self, order_id: str, user_id: str, new_date: str) -> str:
        assert order_id, "Order ID cannot be empty"
        assert user_id, "User ID cannot be empty"
        assert new_date, "New departure date cannot be empty"
        assert _date_ok(new_date), "Date format is incorrect, correct format is %Y-%m-%d"
        assert self._check_user(user_id), "User ID does not match"
        order = self._order(order_id)
        assert order["order_type"] == "flight", "Order type is not a flight order"
        assert order["user_id"] == user_id, f"User {user_id} does not have permission to modify this order"
        assert order["status"] == "paid", "Only paid orders can be modified"
        assert len(order["products"]) == 1, "Only single flight ticket order modification is supported"
        return self._move(order, "flights", FlightProduct, new_date)

    # ------------------------------------------------------------------ reading orders
    def _search(self, order_type: str, user_id: str, date: str | None, status: str | None) -> str:
        if date:
            assert _date_ok(date), "Date format is incorrect, correct format is %Y-%m-%d"
        hits = []
        for order in self._orders_of_type(order_type):
            if order["user_id"] != user_id or (status and order["status"] != status):
                continue
            if date and not any(isinstance(p, TravelProduct) and "date" in type(p).fields and p["date"] == date for p in order["products"]):
                continue  # only typed products have a date upstream
            hits.append(order)
        return "\n".join(str(o) for o in hits)

    @_tool
    def search_hotel_order(self, user_id: str, date: str | None = None, status: str | None = "paid") -> str:
        self._check_caller(user_id)
        if not any(o["user_id"] == user_id for o in self._orders_of_type("hotel")):
            raise ValueError("User does not exist or has no order records")
        return self._search("hotel", user_id, date, status)

    @_tool
    def search_attraction_order(self, user_id: str, date: str | None = None, status: str | None = "paid") -> str:
        self._check_caller(user_id)
        return self._search("attraction", user_id, date, status)

    @_tool
    def search_flight_order(self, user_id: str, date: str | None = None, status: str | None = "paid") -> str:
        self._check_caller(user_id)
        return self._search("flight", user_id, date, status)

    @_tool
    def search_train_order(self, user_id: str, date: str | None = None, status: str | None = "paid") -> str:
        self._check_caller(user_id)
        return self._search("train", user_id, date, status)

    @_tool
    def search_taxi_order(self, user_id: str, status: str | None = "paid") -> str:
        self._check_caller(user_id)
        return "\n".join(str(o) for o in self._orders_of_type("taxi") if o["user_id"] == user_id and not (status and o["status"] != status))

    def _detail(self, order_type: str, order_id: str) -> str:
        assert order_id, "Order ID cannot be empty"
        order = self._order(order_id)
        assert order["order_type"] == order_type, f"Order type is not {'an' if order_type == 'attraction' else 'a'} {order_type} order"
        return repr(order)

    @_tool
    def get_hotel_order_detail(self, order_id: str) -> str:
        return self._detail("hotel", order_id)

    @_tool
    def get_attraction_order_detail(self, order_id: str) -> str:
        return self._detail("attraction", order_id)

    @_tool
    def get_flight_order_detail(self, order_id: str) -> str:
        return self._detail("flight", order_id)

    @_tool
    def get_train_order_detail(self, order_id: str) -> str:
        return self._detail("train", order_id)

    @_tool
    def get_taxi_order_detail(self, order_id: str) -> str:
        return self._detail("taxi", order_id)


__all__ = ["OTA_ORDER_TYPES", "TAXI_TOOLS", "TRAVEL_TABLES", "OTATools"]

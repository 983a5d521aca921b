"""VitaBench database records: the task's JSON coerced as upstream's data models coerce it.

Upstream validates each task's ``environment`` into typed records (floats for prices, scores,
coordinates and durations; model defaults for absent fields; unknown keys dropped) and its
tools answer with the records' text forms. The classes here are plain ``dict`` subclasses (so
the database stays JSON and the state check reads it as before) whose ``repr``/``str`` print
those text forms. Product orders keep the task's raw product dicts (upstream types them
``Any``); products of stores and shops, and the lines of new orders, are typed records.
"""

from __future__ import annotations

import copy
from typing import Any


def _float(value: Any) -> Any:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


class Location(dict):
    """An address with coordinates."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Location:
        return cls(address=raw.get("address"), longitude=_float(raw.get("longitude")), latitude=_float(raw.get("latitude")))

    def __repr__(self) -> str:
        return f"{self['address']} longitude:{self['longitude']},latitude:{self['latitude']}"


class StoreProduct(dict):
    """A delivery product (also one line of a new delivery order)."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> StoreProduct:
        attributes = raw.get("attributes", "")
        if isinstance(attributes, list):
            attributes = ", ".join(attributes)
        return cls(product_id=raw.get("product_id", ""), price=_float(raw.get("price", 0.0)), quantity=_int(raw.get("quantity", 0)),
                   name=raw.get("name"), store_id=raw.get("store_id"), store_name=raw.get("store_name"), attributes=attributes,
                   tags=list(raw.get("tags") or []))

    def __repr__(self) -> str:
        return (f"StoreProduct(store_name={self['store_name']}, store_id={self['store_id']}, product_name={self['name']}, "
                f"product_id={self['product_id']}, attributes={self['attributes']}, quantity={self['quantity']}, "
                f"price={self['price']}, tags={self['tags']})")


class ShopProduct(dict):
    """An in-store product (voucher, set meal...)."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> ShopProduct:
        return cls(product_id=raw.get("product_id", ""), price=_float(raw.get("price", 0.0)), quantity=_int(raw.get("quantity", 0)),
                   name=raw.get("name"), shop_id=raw.get("shop_id"), tags=list(raw.get("tags") or []))

    def __repr__(self) -> str:
        return (f"ShopProduct(shop_id={self['shop_id']}, product_id={self['product_id']}, name={self['name']}, "
                f"price={self['price']}, quantity={self['quantity']}, tags={self['tags']})")


class Store(dict):
    """A delivery store; ``str`` omits the products, ``repr`` lists them one a line."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Store:
        return cls(store_id=raw.get("store_id", ""), name=raw.get("name"), score=_float(raw.get("score")),
                   location=Location.of(raw.get("location") or {}), tags=list(raw.get("tags") or []),
                   products=[StoreProduct.of(p) for p in raw.get("products") or []])

    def __str__(self) -> str:
        return (f"Store(name={self['name']}, store_id={self['store_id']}, score={self['score']}, "
                f"location={self['location']!r}, tags={self['tags']})")

    def __repr__(self) -> str:
        products = "\n".join(repr(p) for p in self["products"])
        return f"{self}, products={products}"


class Shop(dict):
    """An in-store shop; ``str`` omits the products, ``repr`` lists them one a line."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Shop:
        shop_id = raw.get("shop_id")
        return cls(store_id=shop_id, shop_id=shop_id, shop_name=raw.get("shop_name"), score=_float(raw.get("score")),
                   location=Location.of(raw.get("location") or {}), tags=list(raw.get("tags") or []),
                   enable_book=raw.get("enable_book"), book_price=_float(raw.get("book_price")),
                   enable_reservation=raw.get("enable_reservation"), products=[ShopProduct.of(p) for p in raw.get("products") or []])

    def _head(self) -> str:
        return (f"Shop(shop_name={self['shop_name']}, shop_id={self['shop_id']}, score={self['score']}, "
                f"location={self['location']!r}, tags={self['tags']}, enable_book={self['enable_book']}, "
                f"book_price={self['book_price']}, enable_reservation={self['enable_reservation']}")

    def __str__(self) -> str:
        return self._head() + ")"

    def __repr__(self) -> str:
        products = "\n".join(repr(p) for p in self["products"])
        return f"{self._head()}, products={products})"


_ID_LABEL = {"delivery": "store_id", "instore": "shop_id", "hotel": "hotel_id", "attraction": "attraction_id",
             "flight": "flight_id", "train": "train_id"}
"""Upstream's label of an order's store id per order type; it has none for ``taxi`` (printing a taxi
order fails upstream with ``KeyError: 'taxi'``, and so it does here)."""


class Order(dict):
    """A product order; ``str`` is the short form upstream's order searches print."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Order:
        location = raw.get("location")
        shipping = raw.get("shipping_time", 0.0)
        order = cls(order_id=raw.get("order_id"), order_type=raw.get("order_type"), user_id=raw.get("user_id"),
                    store_id=raw.get("store_id"), note=raw.get("note", ""),
                    location=Location.of(location) if isinstance(location, dict) else location,
                    dispatch_time=raw.get("dispatch_time", ""), shipping_time=_float(shipping),
                    delivery_time=raw.get("delivery_time", ""), total_price=_float(raw.get("total_price", 0.0)),
                    create_time=raw.get("create_time", ""), update_time=raw.get("update_time", ""),
                    status=raw.get("status", "unpaid"), products=list(raw.get("products") or []))
        if not order["update_time"] and order["create_time"]:
            order["update_time"] = order["create_time"]
        return order

    def _common_head(self) -> str:
        return (f"Order(order_id:{self['order_id']}, order_type:{self['order_type']}, user_id:{self['user_id']}, "
                f"{_ID_LABEL[str(self['order_type'])]}:{self['store_id']}, ")

    def __str__(self) -> str:
        return (self._common_head() + f"total_price:{self['total_price']}, create_time:{self['create_time']}, "
                f"update_time:{self['update_time']}, status:{self['status']}, ")

    def __repr__(self) -> str:
        head = self._common_head()
        if self["order_type"] == "delivery":
            head += (f"dispatch_time:{self['dispatch_time']}, shipping_time:{self['shipping_time']}, "
                     f"delivery_time:{self['delivery_time']}, ")
        tail = f"note:{self['note']}, " if self["order_type"] == "delivery" else ""
        return (head + f"total_price:{self['total_price']}, create_time:{self['create_time']}, update_time:{self['update_time']}, "
                + tail + f"status:{self['status']}, products:{self['products']!r})")


class BookInfo(dict):
    """A table booking (upstream's text form has no closing parenthesis)."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> BookInfo:
        return cls(book_id=raw.get("book_id"), shop_id=raw.get("shop_id"), book_time=raw.get("book_time"),
                   update_time=raw.get("update_time"), customer_id=raw.get("customer_id"),
                   customer_count=_int(raw.get("customer_count")), book_price=_float(raw.get("book_price")), status=raw.get("status"))

    def __repr__(self) -> str:
        return (f"BookInfo(book_id={self['book_id']},shop_id={self['shop_id']}, book_time={self['book_time']}, "
                f"customer_id={self['customer_id']}, customer_count={self['customer_count']}, "
                f"book_price={self['book_price']}, status={self['status']}")


class ReservationInfo(dict):
    """A visit reservation (upstream's text form has no closing parenthesis)."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> ReservationInfo:
        return cls(reservation_id=raw.get("reservation_id"), shop_id=raw.get("shop_id"),
                   reservation_time=raw.get("reservation_time"), update_time=raw.get("update_time"),
                   customer_id=raw.get("customer_id"), customer_count=_int(raw.get("customer_count")), status=raw.get("status"))

    def __repr__(self) -> str:
        return (f"ReservationInfo(reservation_id={self['reservation_id']},shop_id={self['shop_id']}, "
                f"reservation_time={self['reservation_time']}, customer_id={self['customer_id']}, "
                f"customer_count={self['customer_count']}, status={self['status']}")


def pydantic_text(location: Location) -> str:
    """A location as upstream's OTA records print it (pydantic's own text form, not the address form)."""
    return f"address={location['address']!r} longitude={location['longitude']!r} latitude={location['latitude']!r}"


class TravelProduct(dict):
    """A bookable unit of a travel record (a room, ticket, seat or ride) on one date.

    Upstream types these products; products of orders already in the task stay raw dicts
    (upstream's orders keep them untyped), which matters where upstream asks a product for
    its ``date`` attribute (only typed ones have it).
    """

    kind = ""
    fields: tuple[str, ...] = ()
    label = "product_id"

    @classmethod
    def of(cls, raw: dict[str, Any]) -> TravelProduct:
        record = cls(product_id=raw.get("product_id", ""), price=_float(raw.get("price", 0.0)), quantity=_int(raw.get("quantity", 0)))
        record.update({name: raw.get(name) for name in cls.fields})
        return record

    def __repr__(self) -> str:
        head = ", ".join(f"{name}={self[name]}" for name in reversed(self.fields))
        return f"{type(self).__name__}({head}, price={self['price']}, quantity={self['quantity']}, {self.label}={self['product_id']})"


class HotelProduct(TravelProduct):
    """A hotel room on one night."""

    fields = ("date", "room_type")
    label = "room_id"


class AttractionProduct(TravelProduct):
    """An attraction ticket for one day (upstream prints its id as ``attraction_id``)."""

    fields = ("date", "ticket_type")
    label = "attraction_id"


class FlightProduct(TravelProduct):
    """A seat class of a flight on one date."""

    fields = ("date", "seat_type")
    label = "seat_id"


class TrainProduct(TravelProduct):
    """A seat class of a train on one date."""

    fields = ("date", "seat_type")
    label = "seat_id"


class TaxiProduct(TravelProduct):
    """A ride option of a taxi service (no date)."""

    fields = ("platform", "taxi_type")


class TravelRecord(dict):
    """A hotel, attraction, flight, train or taxi service: ``str`` omits the products, ``repr`` lists them."""

    id_field = ""
    product = TravelProduct
    text_fields: tuple[str, ...] = ()
    floats: tuple[str, ...] = ()
    ints: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()

    @classmethod
    def of(cls, raw: dict[str, Any]) -> TravelRecord:
        record = cls(store_id=raw.get(cls.id_field))
        for name in cls.text_fields:
            value = raw.get(name)
            if name in cls.floats:
                value = _float(value)
            elif name in cls.ints:
                value = _int(value)
            elif name in cls.locations:
                value = Location.of(value or {})
            elif name in cls.lists:
                value = list(value or [])
            record[name] = value
        record["products"] = [cls.product.of(p) for p in raw.get("products") or []]
        return record

    def _field_text(self, name: str) -> str:
        return pydantic_text(self[name]) if name in self.locations else str(self[name])

    def _head(self, names: tuple[str, ...]) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={self._field_text(n)}" for n in names)

    def __str__(self) -> str:
        return self._head(self.text_fields) + ")"

    def __repr__(self) -> str:
        products = "\n".join(repr(p) for p in self["products"])
        return self._head(self.text_fields) + f", products={products})"


class Hotel(TravelRecord):
    """A hotel with its rooms."""

    id_field = "hotel_id"
    product = HotelProduct
    text_fields = ("hotel_id", "hotel_name", "score", "star_rating", "location", "tags")
    floats, ints, locations, lists = ("score",), ("star_rating",), ("location",), ("tags",)


class Attraction(TravelRecord):
    """An attraction with its tickets; upstream's ``str`` form ends open, after the opening hours."""

    id_field = "attraction_id"
    product = AttractionProduct
    text_fields = ("attraction_id", "attraction_name", "location", "description", "score", "opening_hours", "ticket_price")
    floats, locations = ("score", "ticket_price"), ("location",)

    def __str__(self) -> str:
        return self._head(self.text_fields[:-1]) + ", "


class Flight(TravelRecord):
    """A flight with its seat classes per date."""

    id_field = "flight_id"
    product = FlightProduct
    text_fields = ("flight_id", "flight_number", "departure_city", "arrival_city", "departure_airport_location",
                   "arrival_airport_location", "departure_time", "arrival_time", "tags")
    locations, lists = ("departure_airport_location", "arrival_airport_location"), ("tags",)


class Train(TravelRecord):
    """A train with its seat classes per date."""

    id_field = "train_id"
    product = TrainProduct
    text_fields = ("train_id", "train_number", "departure_city", "arrival_city", "departure_station_location",
                   "arrival_station_location", "departure_time", "arrival_time", "tags")
    locations, lists = ("departure_station_location", "arrival_station_location"), ("tags",)


class Taxi(TravelRecord):
    """A taxi service between two places with its ride options (VitaBench 2.0)."""

    id_field = "taxi_id"
    product = TaxiProduct
    text_fields = ("taxi_id", "taxi_type", "platform", "departure_location", "arrival_location", "estimated_duration",
                   "estimated_price", "tags")
    floats, locations, lists = ("estimated_price",), ("departure_location", "arrival_location"), ("tags",)


TRAVEL_TABLES: dict[str, type[TravelRecord]] = {"hotels": Hotel, "attractions": Attraction, "flights": Flight, "trains": Train,
                                                "taxis": Taxi}
"""The OTA database's record tables, in upstream's field order."""


class Weather(dict):
    """One day's weather in one city."""

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Weather:
        low, high = (list(raw.get("temperature") or [None, None]) + [None, None])[:2]
        return cls(city=raw.get("city"), category=raw.get("category"), datetime=raw.get("datetime"),
                   temperature=[_float(low), _float(high)], humidity=_float(raw.get("humidity")))

    def __repr__(self) -> str:
        low, high = self["temperature"]
        return (f"city: {self['city']}, weather: {self['category']}, datetime: {self['datetime']}, "
                f"temperature: {low}~{high}, humidity: {self['humidity']}")


def typed_database(environment: dict[str, Any], domain: str) -> dict[str, Any]:
    """A task's ``environment`` as typed records (a fresh copy; the task is left untouched).

    Only the fields upstream's database of ``domain`` keeps are kept; order, book and
    reservation tables default to empty.
    """
    env = copy.deepcopy(environment)
    db: dict[str, Any] = {
        "time": env.get("time"), "user_id": env.get("user_id"),
        "weather": [Weather.of(w) for w in env["weather"]] if isinstance(env.get("weather"), list) else None,
        "location": [Location.of(loc) for loc in env["location"]] if isinstance(env.get("location"), list) else None,
        "user_historical_behaviors": env.get("user_historical_behaviors", {}),
        "orders": {k: Order.of(v) for k, v in (env.get("orders") or {}).items()},
    }
    if domain == "delivery":
        db["stores"] = {k: Store.of(v) for k, v in (env.get("stores") or {}).items()}
    elif domain == "ota":
        for table, record in TRAVEL_TABLES.items():
            db[table] = {k: record.of(v) for k, v in (env.get(table) or {}).items()}
    else:
        db["shops"] = {k: Shop.of(v) for k, v in (env.get("shops") or {}).items()}
        db["books"] = {k: BookInfo.of(v) for k, v in (env.get("books") or {}).items()}
        db["reservations"] = {k: ReservationInfo.of(v) for k, v in (env.get("reservations") or {}).items()}
    return db

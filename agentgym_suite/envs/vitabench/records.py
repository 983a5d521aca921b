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
                f"{_ID_LABEL.get(str(self['order_type']), 'store_id')}:{self['store_id']}, ")

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
    else:
        db["shops"] = {k: Shop.of(v) for k, v in (env.get("shops") or {}).items()}
        db["books"] = {k: BookInfo.of(v) for k, v in (env.get("books") or {}).items()}
        db["reservations"] = {k: ReservationInfo.of(v) for k, v in (env.get("reservations") or {}).items()}
    return db

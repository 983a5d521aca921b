"""JSON schemas of VitaBench's tools: upstream's parameter names, types, defaults and required sets.

The parameters equal those upstream derives from its tool signatures (checked by the
conformance test against schemas recorded from upstream); the descriptions are this suite's
own wording, in English for both task languages.
"""

from __future__ import annotations

from typing import Any

S: dict[str, Any] = {"type": "string"}
N: dict[str, Any] = {"type": "number"}
I: dict[str, Any] = {"type": "integer"}  # noqa: E741 - one-letter type tags, as S and N
STRS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
INTS: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}
TIME = "a time as yyyy-mm-dd HH:MM:SS"

# name -> (description, {parameter: (schema, description, default or REQUIRED)})
REQUIRED = object()
Spec = tuple[str, dict[str, tuple[dict[str, Any], str, Any]]]

GENERIC: dict[str, Spec] = {
    "longitude_latitude_to_distance": ("Straight-line distance in metres between two points.", {
        "longitude1": (N, "longitude of the first point", REQUIRED), "latitude1": (N, "latitude of the first point", REQUIRED),
        "longitude2": (N, "longitude of the second point", REQUIRED), "latitude2": (N, "latitude of the second point", REQUIRED)}),
    "weather": ("Daily weather of the city best matching an address, for a date range.", {
        "address": (S, "an address or city name", REQUIRED), "date_start": (S, "first day, yyyy-mm-dd", REQUIRED),
        "date_end": (S, "last day, yyyy-mm-dd", REQUIRED)}),
    "address_to_longitude_latitude": ("Longitude and latitude of a known address.", {"address": (S, "the address", REQUIRED)}),
    "get_date_holiday_info": ("The public holiday on a date, if any.", {"date": (S, "the date, yyyy-mm-dd", REQUIRED)}),
    "get_holiday_date": ("The date of a named holiday in a year.", {
        "year": (S, "the year, e.g. 2025", REQUIRED), "holiday_name": (S, "the holiday's name", REQUIRED)}),
    "get_user_historical_behaviors": ("The user's historical behaviours and preferences.", {}),
    "get_user_all_orders": ("All orders in the user's account.", {}),
    "get_nearby": ("Stores or shops within a radius of a point.", {
        "longitude": (N, "longitude of the centre", REQUIRED), "latitude": (N, "latitude of the centre", REQUIRED),
        "range": (N, "radius in metres", REQUIRED)}),
}

DELIVERY: dict[str, Spec] = {
    "delivery_distance_to_time": ("Delivery time in minutes for a distance in metres.", {"distance": (N, "distance in metres", REQUIRED)}),
    "get_delivery_store_info": ("A delivery store's details and its products.", {"store_id": (S, "store id", REQUIRED)}),
    "get_delivery_product_info": ("A delivery product's details.", {"product_id": (S, "product id", REQUIRED)}),
    "delivery_store_search_recommand": ("Search delivery stores by keywords describing the store.", {
        "keywords": (STRS, "keywords describing the store", REQUIRED)}),
    "delivery_product_search_recommand": ("Search delivery products by keywords describing the product.", {
        "keywords": (STRS, "keywords describing the product", REQUIRED)}),
    "create_delivery_order": ("Create an unpaid delivery order of one store's products.", {
        "user_id": (S, "the user's id", REQUIRED), "store_id": (S, "store id", REQUIRED),
        "product_ids": (STRS, "ids of the products ordered", REQUIRED),
        "product_cnts": (INTS, "quantity of each product, in the same order", REQUIRED),
        "address": (S, "delivery address", REQUIRED),
        "dispatch_time": (S, f"when the rider leaves the store, {TIME}", REQUIRED),
        "attributes": (STRS, "the chosen variant of each product, in the same order", None),
        "note": (S, "a note for the store (dietary needs; not the timing)", "")}),
    "pay_delivery_order": ("Pay an unpaid delivery order.", {"order_id": (S, "order id", REQUIRED)}),
    "get_delivery_order_status": ("A delivery order's status.", {"order_id": (S, "order id", REQUIRED)}),
    "cancel_delivery_order": ("Cancel a delivery order.", {"order_id": (S, "order id", REQUIRED)}),
    "modify_delivery_order": ("Replace a delivery order's note.", {
        "order_id": (S, "order id", REQUIRED), "note": (S, "the new note", REQUIRED)}),
    "search_delivery_orders": ("The user's delivery orders with a status.", {
        "user_id": (S, "the user's id", REQUIRED), "status": (S, "order status", "unpaid")}),
    "get_delivery_order_detail": ("A delivery order's details.", {"order_id": (S, "order id", REQUIRED)}),
}

INSTORE: dict[str, Spec] = {
    "instore_shop_search_recommend": ("Search in-store shops by keywords describing the shop.", {
        "keywords": (STRS, "keywords describing the shop", REQUIRED)}),
    "instore_product_search_recommend": ("Search in-store products (vouchers, set meals) by keywords.", {
        "keywords": (STRS, "keywords describing the product", REQUIRED)}),
    "create_instore_product_order": ("Create an unpaid order of one in-store product.", {
        "user_id": (S, "the user's id", REQUIRED), "shop_id": (S, "shop id", REQUIRED),
        "product_id": (S, "product id", REQUIRED), "quantity": (I, "how many", 1)}),
    "pay_instore_order": ("Pay an unpaid in-store order.", {"order_id": (S, "order id", REQUIRED)}),
    "instore_cancel_order": ("Cancel an in-store order.", {"order_id": (S, "order id", REQUIRED)}),
    "instore_book": ("Book a table at a shop that takes bookings (a deposit makes it unpaid).", {
        "user_id": (S, "the user's id", REQUIRED), "shop_id": (S, "shop id", REQUIRED),
        "time": (S, f"booking time, {TIME}", REQUIRED), "customer_count": (I, "number of guests", 1)}),
    "pay_instore_book": ("Pay a booking's deposit.", {"book_id": (S, "booking id", REQUIRED)}),
    "instore_cancel_book": ("Cancel a booking.", {"book_id": (S, "booking id", REQUIRED)}),
    "instore_reservation": ("Reserve a visit at a shop.", {
        "user_id": (S, "the user's id", REQUIRED), "shop_id": (S, "shop id", REQUIRED),
        "time": (S, f"reservation time, {TIME}", REQUIRED), "customer_count": (I, "number of guests", 1)}),
    "instore_modify_reservation": ("Change a reservation's time and party size.", {
        "reservation_id": (S, "reservation id", REQUIRED), "time": (S, f"new time, {TIME}", REQUIRED),
        "customer_count": (I, "new number of guests", 0)}),
    "instore_cancel_reservation": ("Cancel a reservation.", {"reservation_id": (S, "reservation id", REQUIRED)}),
    "get_instore_orders": ("The user's in-store orders.", {"user_id": (S, "the user's id", REQUIRED)}),
    "get_instore_reservations": ("The user's reservations.", {"user_id": (S, "the user's id", REQUIRED)}),
    "get_instore_books": ("The user's bookings.", {"user_id": (S, "the user's id", REQUIRED)}),
    "search_instore_book": ("The user's bookings, or one of them by id.", {
        "user_id": (S, "the user's id", REQUIRED), "book_id": (S, "booking id", None)}),
    "search_instore_reservation": ("The user's reservations, or one of them by id.", {
        "user_id": (S, "the user's id", REQUIRED), "reservation_id": (S, "reservation id", None)}),
}

DAY = "a date as yyyy-mm-dd"


def _order_id(action: str) -> Spec:
    return (action, {"order_id": (S, "order id", REQUIRED)})


def _own_order(action: str) -> Spec:
    return (action, {"order_id": (S, "order id", REQUIRED), "user_id": (S, "the user's id", REQUIRED)})


def _order_search(what: str, dated: bool = True) -> Spec:
    params = {"user_id": (S, "the user's id", REQUIRED)}
    if dated:
        params["date"] = (S, f"only orders with a product on this date, {DAY}", None)
    params["status"] = (S, "unpaid, paid or cancelled (empty: any status)", "paid")
    return (f"The user's {what} orders, filtered by status" + (" and date." if dated else "."), params)


def _dated_booking(what: str, record: str, unit: str) -> Spec:
    return (f"Book {what}: an unpaid order of ``quantity`` units taken from the inventory of that date.", {
        f"{record}_id": (S, f"{record} id", REQUIRED), f"{unit}_id": (S, f"{unit} id (a product of the {record})", REQUIRED),
        "user_id": (S, "the user's id", REQUIRED), "date": (S, DAY, REQUIRED), "quantity": (I, "number of units", REQUIRED)})


def _move(what: str) -> Spec:
    return (f"Move a paid one-line {what} order to another date (same seat type); unpaid again when the new date costs more.", {
        "order_id": (S, "order id", REQUIRED), "user_id": (S, "the user's id", REQUIRED), "new_date": (S, DAY, REQUIRED)})


OTA: dict[str, Spec] = {
    "get_ota_hotel_info": ("A hotel's details and rooms.", {"hotel_id": (S, "hotel id", REQUIRED)}),
    "get_ota_attraction_info": ("An attraction's details and tickets.", {"attraction_id": (S, "attraction id", REQUIRED)}),
    "get_ota_flight_info": ("A flight's details and seats per date.", {"flight_id": (S, "flight id", REQUIRED)}),
    "get_ota_train_info": ("A train's details and seats per date.", {"train_id": (S, "train id", REQUIRED)}),
    "hotel_search_recommand": ("Hotels in a city, best matches to the keywords first.", {
        "city_name": (S, "the city", REQUIRED), "key_words": (STRS, "keywords describing the hotel", None)}),
    "attractions_search_recommend": ("Attractions in a city, best matches to the keywords first.", {
        "city_name": (S, "the city", REQUIRED), "key_words": (STRS, "keywords describing the attraction", REQUIRED)}),
    "flight_search_recommend": ("Flights between two cities.", {
        "departure": (S, "departure city", REQUIRED), "destination": (S, "arrival city", REQUIRED)}),
    "train_ticket_search": ("Trains between two cities with seats on a date.", {
        "departure": (S, "departure city", REQUIRED), "destination": (S, "arrival city", REQUIRED), "date": (S, DAY, REQUIRED)}),
    "create_hotel_order": ("Book one room of a hotel: an unpaid order.", {
        "hotel_id": (S, "hotel id", REQUIRED), "room_id": (S, "room id (a product of the hotel)", REQUIRED),
        "user_id": (S, "the user's id", REQUIRED)}),
    "create_attraction_order": _dated_booking("attraction tickets", "attraction", "ticket"),
    "create_flight_order": _dated_booking("flight seats", "flight", "seat"),
    "create_train_order": _dated_booking("train seats", "train", "seat"),
    "pay_hotel_order": _order_id("Pay an unpaid hotel order."),
    "pay_attraction_order": _order_id("Pay an unpaid attraction order."),
    "pay_flight_order": _order_id("Pay an unpaid flight order."),
    "pay_train_order": _order_id("Pay an unpaid train order."),
    "search_hotel_order": _order_search("hotel"),
    "search_attraction_order": _order_search("attraction"),
    "search_flight_order": _order_search("flight"),
    "search_train_order": _order_search("train"),
    "get_hotel_order_detail": _order_id("A hotel order's details."),
    "get_attraction_order_detail": _order_id("An attraction order's details."),
    "get_flight_order_detail": _order_id("A flight order's details."),
    "get_train_order_detail": _order_id("A train order's details."),
    "modify_train_order": _move("train"),
    "modify_flight_order": _move("flight"),
    "cancel_hotel_order": _own_order("Cancel a hotel order (a paid one is refunded)."),
    "cancel_attraction_order": _own_order("Cancel an attraction order (a paid one is refunded)."),
    "cancel_flight_order": _own_order("Cancel a flight order (a paid one is refunded)."),
    "cancel_train_order": _own_order("Cancel a train order (a paid one is refunded)."),
    "get_taxi_info": ("A taxi service's details and ride options.", {"taxi_id": (S, "taxi service id", REQUIRED)}),
    "taxi_search": ("Taxi services between two places.", {
        "departure_location": (S, "pick-up place", REQUIRED), "arrival_location": (S, "drop-off place", REQUIRED)}),
    "create_taxi_order": ("Book rides of a taxi service: an unpaid order.", {
        "taxi_id": (S, "taxi service id", REQUIRED), "product_id": (S, "ride option id (a product of the service)", REQUIRED),
        "user_id": (S, "the user's id", REQUIRED), "quantity": (I, "number of rides", 1)}),
    "pay_taxi_order": _order_id("Pay an unpaid taxi order."),
    "cancel_taxi_order": _own_order("Cancel a taxi order (a paid one is refunded)."),
    "search_taxi_order": _order_search("taxi", dated=False),
    "get_taxi_order_detail": _order_id("A taxi order's details."),
}

DOMAIN_TOOLS = {"delivery": DELIVERY, "instore": INSTORE, "ota": OTA}


def _schema(name: str, spec: Spec) -> dict[str, Any]:
    description, params = spec
    properties: dict[str, Any] = {}
    for pname, (ptype, pdesc, default) in params.items():
        properties[pname] = {**ptype, "description": pdesc, **({} if default is REQUIRED else {"default": default})}
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p for p, (_, _, default) in params.items() if default is REQUIRED]
    if required:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def tool_schemas(domain: str, language: str = "english") -> list[dict[str, Any]]:
    """The tools of ``domain`` (its own, then the generic ones), as upstream lists them."""
    del language  # the wording is English for both languages
    return [_schema(n, s) for n, s in {**DOMAIN_TOOLS[domain], **GENERIC}.items()]

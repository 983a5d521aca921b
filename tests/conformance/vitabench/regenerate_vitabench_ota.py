"""Regenerate the OTA (travel) conformance inputs and upstream's outputs on them (not run by pytest).

Upstream's OTA and cross-domain task files are not in this project's data (their blobs are absent from the v1
snapshot, and 2.0 ships no data), so the databases here are small ones made for the test, in
upstream's ``OTADB`` format: hotels, attractions, flights, trains, taxis (2.0 only) and orders
of the user and of another user. The call sequences are oracle-like bookings (create, then pay)
of every kind, and perturbations: a wrong id, a wrong argument, another user's id, a bad date,
an extra write, a call after a failure, a second payment or cancellation, a tool of the wrong
order type, modifications to a date with more, less or no inventory, and the read tools. Three
more sequences play cross-domain tasks (``delivery,ota``, ``instore,ota``, ``delivery,instore,ota``)
on one database holding every domain's records, through upstream's ``get_cross_environment``.

Two steps:

1. ``inputs`` (any Python): the databases and sequences -> ``inputs_ota.json``::

       python tests/conformance/vitabench/regenerate_vitabench_ota.py inputs

2. ``expected`` (a virtualenv with upstream installed; ``PYTHONPATH`` picks the upstream):
   every sequence through upstream's OTA ``Environment.get_response`` (registries cleared first),
   recording the result strings, a hash of the final orders and inventories and upstream's
   tool parameter schemas -> ``expected_ota_v1.json`` (meituan-longcat/vitabench at
   ``UPSTREAM_COMMITS["v1"]``: 30 OTA tools) or ``expected_ota_v2.json``
   (meituan-longcat/VitaBench-2.0 at ``UPSTREAM_COMMITS["v2"]``: the same tools plus 7 taxi
   tools; ``get_user_historical_behaviors`` is no tool there)::

       cd /work/scratch/vita && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
         venv/bin/python /path/to/regenerate_vitabench_ota.py expected --version v1
       cd /work/scratch/vita2 && VITA_MODEL_CONFIG_PATH=/tmp/models.yaml PYTHONPATH=src \\
         ../vita/venv/bin/python /path/to/regenerate_vitabench_ota.py expected --version v2
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from replay import canonical_tables, run_sequence  # noqa: E402

UPSTREAMS = {"v1": "meituan-longcat/vitabench", "v2": "meituan-longcat/VitaBench-2.0"}
UPSTREAM_COMMITS = {"v1": "96f3b8529d8ea38d330de2405af7e32a1454f6cd", "v2": "f60169e89f30499cb7883f3dad76bd03facc908d"}
INVENTORIES = ("hotels", "attractions", "flights", "trains", "taxis")
USER, OTHER = "U100", "U200"
NOW = "2025-07-01 09:00:00"


def _loc(address: str, lon: float, lat: float) -> dict[str, Any]:
    return {"address": address, "longitude": lon, "latitude": lat}


def database(with_taxi_order: bool = False) -> dict[str, Any]:
    """A small OTA database in upstream's format (the task's ``environment``)."""
    hotels = {
        "H1": {"hotel_id": "H1", "hotel_name": "Harbour Hotel", "score": 4.6, "star_rating": 4,
               "location": _loc("Shanghai Huangpu District Zhongshan East Road 1", 121.49, 31.24),
               "tags": ["river view", "wifi", "breakfast"],
               "products": [{"product_id": "R1", "price": 500, "quantity": 2, "date": "2025-07-02", "room_type": "King room"},
                            {"product_id": "R2", "price": 650.5, "quantity": 0, "date": "2025-07-02", "room_type": "Suite"},
                            {"product_id": "R3", "price": 480, "quantity": 1, "date": "2025-07-03", "room_type": "King room"}]},
        "H2": {"hotel_id": "H2", "hotel_name": "Capital Inn", "score": 4, "star_rating": 3,
               "location": _loc("Beijing Dongcheng District Wangfujing Street 8", 116.41, 39.91),
               "tags": ["budget", "subway"],
               "products": [{"product_id": "R9", "price": 300, "quantity": 5, "date": "2025-07-02", "room_type": "Twin room"}]},
    }
    attractions = {
        "A1": {"attraction_id": "A1", "attraction_name": "Shanghai Museum", "description": "Ancient Chinese art and bronzes",
               "location": _loc("Shanghai Huangpu District People's Avenue 201", 121.47, 31.23), "score": 4.8,
               "opening_hours": "09:00-17:00", "ticket_price": 0,
               "products": [{"product_id": "T1", "price": 50, "quantity": 10, "date": "2025-07-02", "ticket_type": "Adult"},
                            {"product_id": "T2", "price": 25, "quantity": 1, "date": "2025-07-02", "ticket_type": "Student"}]},
        "A2": {"attraction_id": "A2", "attraction_name": "Forbidden City", "description": "Imperial palace",
               "location": _loc("Beijing Dongcheng District Jingshan Front Street 4", 116.40, 39.92), "score": 4.9,
               "opening_hours": "08:30-17:00", "ticket_price": 60.0,
               "products": [{"product_id": "T5", "price": 60, "quantity": 100, "date": "2025-07-05", "ticket_type": "Adult"}]},
    }
    flights = {
        "F1": {"flight_id": "F1", "flight_number": "MU5102", "departure_city": "Beijing", "arrival_city": "Shanghai",
               "departure_airport_location": _loc("Beijing Capital International Airport T2", 116.60, 40.08),
               "arrival_airport_location": _loc("Shanghai Hongqiao International Airport T2", 121.33, 31.19),
               "departure_time": "08:00", "arrival_time": "10:15", "tags": ["direct"],
               "products": [{"product_id": "S1", "price": 800, "quantity": 5, "date": "2025-07-02", "seat_type": "economy"},
                            {"product_id": "S2", "price": 900, "quantity": 5, "date": "2025-07-03", "seat_type": "economy"},
                            {"product_id": "S3", "price": 600, "quantity": 0, "date": "2025-07-04", "seat_type": "economy"},
                            {"product_id": "S4", "price": 2400, "quantity": 2, "date": "2025-07-02", "seat_type": "business"}]},
    }
    trains = {
        "TR1": {"train_id": "TR1", "train_number": "G1", "departure_city": "Beijing", "arrival_city": "Shanghai",
                "departure_station_location": _loc("Beijing South Railway Station", 116.38, 39.87),
                "arrival_station_location": _loc("Shanghai Hongqiao Railway Station", 121.32, 31.20),
                "departure_time": "09:00", "arrival_time": "13:28", "tags": ["high-speed"],
                "products": [{"product_id": "C1", "price": 553, "quantity": 3, "date": "2025-07-02", "seat_type": "second-class"},
                             {"product_id": "C2", "price": 500, "quantity": 3, "date": "2025-07-03", "seat_type": "second-class"},
                             {"product_id": "C3", "price": 930, "quantity": 1, "date": "2025-07-02", "seat_type": "first-class"},
                             {"product_id": "C4", "price": 600, "quantity": 1, "date": "2025-07-04", "seat_type": "second-class"}]},
    }
    taxis = {
        "X1": {"taxi_id": "X1", "taxi_type": "express", "platform": "DiDi",
               "departure_location": _loc("Shanghai Hongqiao Railway Station", 121.32, 31.20),
               "arrival_location": _loc("Shanghai Huangpu District Zhongshan East Road 1", 121.49, 31.24),
               "estimated_duration": "45 min", "estimated_price": 85, "tags": ["fast"],
               "products": [{"product_id": "XP1", "price": 85, "quantity": 3, "taxi_type": "express", "platform": "DiDi"},
                            {"product_id": "XP2", "price": 150, "quantity": 0, "taxi_type": "premium", "platform": "DiDi"}]},
    }
    orders = {
        "OOTRAIN0001": {"order_id": "OOTRAIN0001", "order_type": "train", "user_id": USER, "store_id": "TR1", "total_price": 553,
                        "create_time": "2025-06-20 10:00:00", "status": "paid",
                        "products": [{"product_id": "C1", "price": 553, "date": "2025-07-02", "seat_type": "second-class", "quantity": 1}]},
        "OOFLIGHT001": {"order_id": "OOFLIGHT001", "order_type": "flight", "user_id": USER, "store_id": "F1", "total_price": 1600,
                        "create_time": "2025-06-21 10:00:00", "update_time": "2025-06-21 10:05:00", "status": "paid",
                        "products": [{"product_id": "S1", "price": 800, "date": "2025-07-02", "seat_type": "economy", "quantity": 2}]},
        "OOHOTEL0001": {"order_id": "OOHOTEL0001", "order_type": "hotel", "user_id": USER, "store_id": "H1", "total_price": 500,
                        "create_time": "2025-06-22 10:00:00", "status": "unpaid",
                        "products": [{"product_id": "R1", "price": 500, "date": "2025-07-02", "room_type": "King room", "quantity": 1}]},
        "OOHOTEL0002": {"order_id": "OOHOTEL0002", "order_type": "hotel", "user_id": OTHER, "store_id": "H2", "total_price": 300,
                        "create_time": "2025-06-22 11:00:00", "status": "paid",
                        "products": [{"product_id": "R9", "price": 300, "date": "2025-07-02", "room_type": "Twin room", "quantity": 1}]},
        "OOATTR00001": {"order_id": "OOATTR00001", "order_type": "attraction", "user_id": USER, "store_id": "A1", "total_price": 100,
                        "create_time": "2025-06-23 10:00:00", "status": "cancelled",
                        "products": [{"product_id": "T1", "price": 50, "date": "2025-07-02", "ticket_type": "Adult", "quantity": 2}]},
        "OOTRAIN0002": {"order_id": "OOTRAIN0002", "order_type": "train", "user_id": USER, "store_id": "TR1", "total_price": 1053,
                        "create_time": "2025-06-24 10:00:00", "status": "paid",
                        "products": [{"product_id": "C1", "price": 553, "date": "2025-07-02", "seat_type": "second-class", "quantity": 1},
                                     {"product_id": "C2", "price": 500, "date": "2025-07-03", "seat_type": "second-class", "quantity": 1}]},
    }
    if with_taxi_order:
        orders["OOTAXI00001"] = {"order_id": "OOTAXI00001", "order_type": "taxi", "user_id": USER, "store_id": "X1", "total_price": 85,
                                 "create_time": "2025-06-25 10:00:00", "status": "unpaid",
                                 "products": [{"product_id": "XP1", "price": 85, "quantity": 1, "taxi_type": "express", "platform": "DiDi"}]}
    return {
        "time": NOW, "user_id": USER,
        "weather": [{"city": "Shanghai", "category": "sunny", "datetime": "2025-07-02", "temperature": [26, 33], "humidity": 70}],
        "location": [_loc("Shanghai Pudong New Area Century Avenue 100", 121.52, 31.23)],
        "user_historical_behaviors": {"travel": ["prefers high-speed trains"]},
        "orders": orders, "hotels": hotels, "attractions": attractions, "flights": flights, "trains": trains, "taxis": taxis,
    }


def cross_database() -> dict[str, Any]:
    """The travel database plus a delivery store and an in-store shop: one task database for every domain."""
    db = database()
    db["location"].append(_loc("Shanghai Huangpu District Nanjing East Road 300", 121.48, 31.24))
    db["orders"]["OTDELIV0001"] = {
        "order_id": "OTDELIV0001", "order_type": "delivery", "user_id": USER, "store_id": "S1", "total_price": 32,
        "create_time": "2025-06-30 12:00:00", "status": "unpaid", "dispatch_time": "2025-06-30 12:10:00", "note": "",
        "location": _loc("Shanghai Huangpu District Nanjing East Road 300", 121.48, 31.24),
        "products": [{"product_id": "P1", "name": "Pork buns", "price": 16, "quantity": 2, "store_id": "S1",
                      "store_name": "Bund Dumplings", "attributes": "", "tags": []}]}
    db["stores"] = {"S1": {"store_id": "S1", "name": "Bund Dumplings", "score": 4.7, "tags": ["dumplings", "breakfast"],
                           "location": _loc("Shanghai Huangpu District Zhongshan East Road 20", 121.49, 31.24),
                           "products": [{"product_id": "P1", "name": "Pork buns", "price": 16, "store_id": "S1", "store_name": "Bund Dumplings",
                                         "tags": ["steamed"], "attributes": ""},
                                        {"product_id": "P2", "name": "Wonton soup", "price": 22, "store_id": "S1",
                                         "store_name": "Bund Dumplings", "tags": ["soup"], "attributes": ""}]}}
    db["shops"] = {"I1": {"shop_id": "I1", "shop_name": "Harbour Spa", "score": 4.4, "tags": ["massage"], "enable_book": True, "book_price": 50,
                          "enable_reservation": True,
                          "location": _loc("Shanghai Huangpu District Zhongshan East Road 5", 121.49, 31.24),
                          "products": [{"product_id": "IP1", "name": "Foot massage 60 min", "price": 168, "quantity": 10, "shop_id": "I1",
                                        "tags": ["massage"]}]}}
    return db


def _c(name: str, **arguments: Any) -> list[Any]:
    return [name, arguments]


def sequences() -> dict[str, dict[str, Any]]:
    """Named sequences, each ``{"db": "base"|"taxi_order", "calls": [[name, arguments], ...]}``."""
    hotel = _c("create_hotel_order", hotel_id="H1", room_id="R1", user_id=USER)
    attraction = _c("create_attraction_order", attraction_id="A1", ticket_id="T1", user_id=USER, date="2025-07-02", quantity=2)
    flight = _c("create_flight_order", flight_id="F1", seat_id="S1", user_id=USER, date="2025-07-02", quantity=1)
    train = _c("create_train_order", train_id="TR1", seat_id="C1", user_id=USER, date="2025-07-02", quantity=2)
    taxi = _c("create_taxi_order", taxi_id="X1", product_id="XP1", user_id=USER)
    base: dict[str, list[list[Any]]] = {
        "gold_hotel": [hotel, _c("pay_hotel_order", order_id="$NEW1"), _c("get_hotel_order_detail", order_id="$NEW1"),
                       _c("search_hotel_order", user_id=USER)],
        "gold_attraction": [attraction, _c("pay_attraction_order", order_id="$NEW1"), _c("get_attraction_order_detail", order_id="$NEW1"),
                            _c("search_attraction_order", user_id=USER, date="2025-07-02")],
        "gold_flight": [flight, _c("pay_flight_order", order_id="$NEW1"), _c("search_flight_order", user_id=USER, date="2025-07-02"),
                        _c("get_ota_flight_info", flight_id="F1")],
        "gold_train": [train, _c("pay_train_order", order_id="$NEW1"), _c("search_train_order", user_id=USER, status=None),
                       _c("get_ota_train_info", train_id="TR1")],
        "gold_taxi": [_c("taxi_search", departure_location="Hongqiao Railway Station", arrival_location="Zhongshan East Road"),
                      taxi, _c("get_taxi_info", taxi_id="X1"), _c("search_taxi_order", user_id=USER)],
        "drop_pay": [hotel, _c("get_hotel_order_detail", order_id="$NEW1"), _c("search_hotel_order", user_id=USER, status="unpaid")],
        "wrong_room": [_c("create_hotel_order", hotel_id="H1", room_id="R404", user_id=USER), _c("pay_hotel_order", order_id="$NEW1")],
        "wrong_hotel": [_c("create_hotel_order", hotel_id="H404", room_id="R1", user_id=USER), _c("get_ota_hotel_info", hotel_id="H404")],
        "sold_out": [_c("create_hotel_order", hotel_id="H1", room_id="R2", user_id=USER),
                     _c("create_taxi_order", taxi_id="X1", product_id="XP2", user_id=USER),
                     _c("create_flight_order", flight_id="F1", seat_id="S3", user_id=USER, date="2025-07-04", quantity=1),
                     _c("create_attraction_order", attraction_id="A1", ticket_id="T2", user_id=USER, date="2025-07-02", quantity=2)],
        "wrong_date": [_c("create_flight_order", flight_id="F1", seat_id="S1", user_id=USER, date="2025-07-03", quantity=1),
                       _c("create_train_order", train_id="TR1", seat_id="C1", user_id=USER, date="07/02/2025", quantity=1),
                       _c("create_attraction_order", attraction_id="A2", ticket_id="T5", user_id=USER, date="2025-07-02", quantity=1)],
        "other_user": [_c("create_hotel_order", hotel_id="H1", room_id="R1", user_id=OTHER),
                       _c("create_train_order", train_id="TR1", seat_id="C1", user_id="", date="2025-07-02", quantity=1),
                       _c("cancel_hotel_order", order_id="OOHOTEL0002", user_id=USER),
                       _c("modify_train_order", order_id="OOTRAIN0001", user_id=OTHER, new_date="2025-07-03"),
                       _c("search_hotel_order", user_id=OTHER)],
        "wrong_arguments": [_c("create_train_order", train_id="TR1", seat_id="C1", user_id=USER, date="2025-07-02", quantity=0),
                            _c("create_train_order", train_id="TR1", seat_id="C1", user_id=USER, date="2025-07-02", quantity="2"),
                            _c("create_train_order", train_id="TR1", seat_id="C1", user_id=USER, date="2025-07-02", quantity=9),
                            _c("create_flight_order", flight_id="F1", seat_id="S1", user_id=USER, date="2025-07-02"),
                            _c("create_hotel_order", hotel_id="H1", room_id="R1", user_id=USER, date="2025-07-02"),
                            _c("create_attraction_order", attraction_id="", ticket_id="T1", user_id=USER, date="2025-07-02", quantity=1),
                            _c("create_taxi_order", taxi_id="X1", product_id="XP1", user_id=USER, quantity=0),
                            _c("get_ota_hotel_info", hotel_id=""), _c("no_such_tool", x=1)],
        "extra_write": [hotel, _c("pay_hotel_order", order_id="$NEW1"), hotel, _c("pay_hotel_order", order_id="$NEW2"), hotel,
                        _c("get_ota_hotel_info", hotel_id="H1"), _c("search_hotel_order", user_id=USER, date="2025-07-02")],
        "after_failure": [_c("create_flight_order", flight_id="F1", seat_id="S1", user_id=USER, date="2025-07-02", quantity=9), flight,
                          _c("pay_flight_order", order_id="$NEW1"), _c("pay_flight_order", order_id="$NEW1")],
        "wrong_id": [_c("pay_hotel_order", order_id="OO0000000000"), _c("get_hotel_order_detail", order_id="OO0000000000"),
                     _c("cancel_train_order", order_id="OO0000000000", user_id=USER), _c("pay_train_order", order_id=""),
                     _c("get_ota_attraction_info", attraction_id="A404"), _c("get_ota_train_info", train_id="TR404"),
                     _c("get_ota_flight_info", flight_id="F404"), _c("get_taxi_info", taxi_id="X404")],
        "wrong_type": [_c("pay_hotel_order", order_id="OOHOTEL0001"), _c("pay_flight_order", order_id="OOHOTEL0001"),
                       _c("get_flight_order_detail", order_id="OOTRAIN0001"), _c("cancel_flight_order", order_id="OOTRAIN0001", user_id=USER),
                       _c("modify_flight_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-03"),
                       _c("get_taxi_order_detail", order_id="OOTRAIN0001"), _c("cancel_taxi_order", order_id="OOTRAIN0001", user_id=USER)],
        "cancel": [_c("cancel_train_order", order_id="OOTRAIN0001", user_id=USER), _c("cancel_train_order", order_id="OOTRAIN0001", user_id=USER),
                   _c("cancel_hotel_order", order_id="OOHOTEL0001", user_id=USER), _c("cancel_attraction_order", order_id="OOATTR00001", user_id=USER),
                   _c("cancel_flight_order", order_id="OOFLIGHT001", user_id=OTHER), _c("cancel_flight_order", order_id="OOFLIGHT001", user_id=USER),
                   _c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-03"),
                   _c("search_train_order", user_id=USER, status="cancelled"), _c("get_user_all_orders")],
        "modify_train": [_c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-03"),
                         _c("get_train_order_detail", order_id="OOTRAIN0001"), _c("get_ota_train_info", train_id="TR1"),
                         _c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-04"),
                         _c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-04"),
                         _c("pay_train_order", order_id="OOTRAIN0001"),
                         _c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025-07-09"),
                         _c("modify_train_order", order_id="OOTRAIN0001", user_id=USER, new_date="2025/07/03"),
                         _c("modify_train_order", order_id="OOTRAIN0002", user_id=USER, new_date="2025-07-03"),
                         _c("modify_train_order", order_id="OO0000000000", user_id=USER, new_date="2025-07-03"),
                         _c("get_ota_train_info", train_id="TR1")],
        "modify_new_train": [train, _c("modify_train_order", order_id="$NEW1", user_id=USER, new_date="2025-07-03"),
                             _c("pay_train_order", order_id="$NEW1"),
                             _c("modify_train_order", order_id="$NEW1", user_id=USER, new_date="2025-07-03"),
                             _c("get_train_order_detail", order_id="$NEW1")],
        "modify_flight": [_c("modify_flight_order", order_id="OOFLIGHT001", user_id=USER, new_date="2025-07-03"),
                          _c("pay_flight_order", order_id="OOFLIGHT001"),
                          _c("modify_flight_order", order_id="OOFLIGHT001", user_id=USER, new_date="2025-07-04"),
                          _c("modify_flight_order", order_id="OOFLIGHT001", user_id=USER, new_date="2025-07-02"),
                          _c("modify_flight_order", order_id="OOFLIGHT001", user_id=OTHER, new_date="2025-07-03"),
                          _c("modify_flight_order", order_id="OOFLIGHT001", user_id=USER, new_date="3 July"),
                          _c("get_flight_order_detail", order_id="OOFLIGHT001"), _c("get_ota_flight_info", flight_id="F1")],
        "searches": [_c("hotel_search_recommand", city_name="Shanghai", key_words=["river", "view"]),
                     _c("hotel_search_recommand", city_name="Shanghai"),
                     _c("hotel_search_recommand", city_name="Atlantis", key_words=["spa"]),
                     _c("hotel_search_recommand", city_name="Beijing", key_words="budget"),
                     _c("attractions_search_recommend", city_name="Shanghai", key_words=["museum"]),
                     _c("attractions_search_recommend", city_name="Beijing", key_words=["palace", "imperial"]),
                     _c("attractions_search_recommend", city_name="Nowhere", key_words=["x"]),
                     _c("attractions_search_recommend", city_name="Shanghai"),
                     _c("flight_search_recommend", departure="Beijing", destination="Shanghai"),
                     _c("flight_search_recommend", departure="Beijing", destination="Guangzhou"),
                     _c("flight_search_recommend", departure="", destination="Shanghai"),
                     _c("train_ticket_search", departure="Beijing", destination="Shanghai", date="2025-07-02"),
                     _c("train_ticket_search", departure="Beijing", destination="Shanghai", date="2025-07-05"),
                     _c("train_ticket_search", departure="Beijing", destination="Shanghai", date="2 July"),
                     _c("train_ticket_search", departure="Beijing", destination="Shanghai", date=""),
                     _c("taxi_search", departure_location="Airport", arrival_location="Museum"),
                     _c("taxi_search", departure_location="", arrival_location="Museum")],
        "order_reads": [_c("search_hotel_order", user_id=USER), _c("search_hotel_order", user_id=USER, status=None),
                        _c("search_hotel_order", user_id=USER, status="unpaid", date="2025-07-02"),
                        _c("search_hotel_order", user_id=USER, date="July 2"), _c("search_hotel_order", user_id=""),
                        _c("search_attraction_order", user_id=USER, status="cancelled"),
                        _c("search_attraction_order", user_id=USER, status="cancelled", date="2025-07-02"),
                        _c("search_flight_order", user_id=USER), _c("search_flight_order", user_id=OTHER),
                        _c("search_train_order", user_id=USER, date="2025-07-03"), _c("search_train_order", user_id=USER, date="bad"),
                        _c("search_taxi_order", user_id=USER, status=None),
                        _c("get_hotel_order_detail", order_id="OOHOTEL0002"), _c("get_attraction_order_detail", order_id="OOATTR00001"),
                        _c("get_train_order_detail", order_id="OOTRAIN0002"), _c("get_train_order_detail", order_id=""),
                        _c("get_user_all_orders"), _c("get_user_historical_behaviors")],
        "generic_reads": [_c("get_nearby", longitude=121.49, latitude=31.24, range=3000),
                          _c("get_nearby", longitude=116.41, latitude=39.91, range=20000),
                          _c("get_nearby", longitude=121.33, latitude=31.19, range=500),
                          _c("get_nearby", longitude=0.0, latitude=0.0, range=10),
                          _c("address_to_longitude_latitude", address="Shanghai Hongqiao Railway Station"),
                          _c("address_to_longitude_latitude", address="Forbidden City Jingshan Front Street"),
                          _c("address_to_longitude_latitude", address="Beijing Capital International Airport"),
                          _c("address_to_longitude_latitude", address="Nowhere Street 1, Atlantis"),
                          _c("weather", address="Shanghai", date_start="2025-07-01", date_end="2025-07-03"),
                          _c("longitude_latitude_to_distance", longitude1=121.49, latitude1=31.24, longitude2=116.41, latitude2=39.91),
                          _c("get_date_holiday_info", date="2025-10-01"),
                          _c("get_holiday_date", year="2025", holiday_name="Mid-Autumn")],
    }
    taxi_db: dict[str, list[list[Any]]] = {
        "taxi_order_reads": [_c("search_taxi_order", user_id=USER, status="unpaid"), _c("get_taxi_order_detail", order_id="OOTAXI00001"),
                             _c("get_user_all_orders"), _c("pay_taxi_order", order_id="OOTAXI00001"),
                             _c("pay_taxi_order", order_id="OOTAXI00001"), _c("search_taxi_order", user_id=USER, status=None),
                             _c("cancel_taxi_order", order_id="OOTAXI00001", user_id=USER),
                             _c("cancel_taxi_order", order_id="OOTAXI00001", user_id=USER), _c("search_hotel_order", user_id=USER)],
    }
    delivery = _c("create_delivery_order", user_id=USER, store_id="S1", product_ids=["P1", "P2"], product_cnts=[2, 1],
                  address="Shanghai Huangpu District Nanjing East Road 300", dispatch_time="2025-07-01 11:30:00")
    booking = _c("instore_book", user_id=USER, shop_id="I1", time="2025-07-02 15:00:00", customer_count=2)
    near = _c("get_nearby", longitude=121.49, latitude=31.24, range=2000)
    cross: dict[str, tuple[str, list[list[Any]]]] = {
        "cross_delivery_ota": ("delivery,ota", [
            delivery, _c("pay_delivery_order", order_id="$NEW1"), hotel, _c("pay_hotel_order", order_id="$NEW2"),
            _c("get_user_all_orders"), _c("search_delivery_orders", user_id=USER, status="paid"), _c("search_hotel_order", user_id=USER),
            _c("get_delivery_order_detail", order_id="$NEW2"), _c("get_hotel_order_detail", order_id="$NEW1"),
            _c("pay_hotel_order", order_id="OTDELIV0001"), _c("cancel_delivery_order", order_id="OTDELIV0001"),
            _c("cancel_hotel_order", order_id="$NEW1", user_id=USER), near,
            _c("address_to_longitude_latitude", address="Nanjing East Road 300"),
            _c("delivery_product_search_recommand", keywords=["soup"]), _c("hotel_search_recommand", city_name="Shanghai", key_words=["river"]),
            booking, _c("create_taxi_order", taxi_id="X1", product_id="XP1", user_id=USER), _c("get_user_historical_behaviors")]),
        "cross_instore_ota": ("instore,ota", [
            booking, _c("pay_instore_book", book_id="$NEW1"), train, _c("pay_train_order", order_id="$NEW2"),
            _c("create_instore_product_order", user_id=USER, shop_id="I1", product_id="IP1", quantity=2),
            _c("get_instore_books", user_id=USER), _c("get_instore_orders", user_id=USER), _c("search_train_order", user_id=USER),
            _c("get_user_all_orders"), near, _c("instore_product_search_recommend", keywords=["massage"]), delivery]),
        "cross_all": ("delivery,instore,ota", [
            delivery, booking, flight, _c("pay_flight_order", order_id="$NEW3"), _c("pay_delivery_order", order_id="$NEW1"),
            _c("instore_reservation", user_id=USER, shop_id="I1", time="2025-07-02 18:00:00", customer_count=3),
            _c("get_user_all_orders"), near, _c("get_nearby", longitude=116.6, latitude=40.08, range=5000),
            _c("address_to_longitude_latitude", address="Zhongshan East Road"),
            _c("cancel_flight_order", order_id="$NEW3", user_id=USER), _c("instore_cancel_order", order_id="$NEW1"),
            _c("search_instore_book", user_id=USER)]),
    }
    out = {name: {"db": "base", "calls": calls} for name, calls in base.items()}
    out.update({name: {"db": "taxi_order", "calls": calls} for name, calls in taxi_db.items()})
    out.update({name: {"db": "cross", "domain": domain, "calls": calls} for name, (domain, calls) in cross.items()})
    return out


def write_inputs() -> None:
    payload = {"upstream": {k: {"repo": UPSTREAMS[k], "commit": UPSTREAM_COMMITS[k]} for k in UPSTREAMS},
               "databases": {"base": database(), "taxi_order": database(with_taxi_order=True), "cross": cross_database()},
               "sequences": sequences()}
    (HERE / "inputs_ota.json").write_text(json.dumps(payload, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n",
                                          encoding="utf-8")
    print(len(payload["sequences"]), "sequences")


# ---------------------------------------------------------------------------- step 2: upstream
def _upstream_env(environment: dict[str, Any], domain: str = "ota") -> Any:
    from vita.data_model.tasks import Location, ProductBaseModel, StoreBaseModel
    from vita.domains.ota.environment import get_environment
    from vita.environment.environment import get_cross_environment

    for registry in (StoreBaseModel, ProductBaseModel, Location):
        registry.clear_thread_data()
    if "," in domain:  # upstream's cross-domain environment: every domain's tools over a merged database
        return get_cross_environment(domain, copy.deepcopy(environment), "english")
    return get_environment(copy.deepcopy(environment), "english")


def _products(items: Any) -> list[list[Any]]:
    return [[p.product_id, getattr(p, "date", None), p.quantity] for p in items]


def upstream_state(env: Any) -> dict[str, dict[str, Any]]:
    """The orders (as upstream dumps them) and each inventory's (product, date, quantity) rows."""
    db = env.tools.db
    state: dict[str, dict[str, Any]] = {"orders": {k: v.model_dump() for k, v in (db.orders or {}).items()}}
    for table in ("books", "reservations"):
        if hasattr(db, table):
            state[table] = {k: v.model_dump() for k, v in getattr(db, table).items()}
    for table in INVENTORIES:
        if hasattr(db, table):
            state[table] = {k: _products(v.products) for k, v in getattr(db, table).items()}
    return state


def write_expected(version: str) -> None:
    from vita.data_model.message import ToolCall

    inputs = json.loads((HERE / "inputs_ota.json").read_text(encoding="utf-8"))
    results: dict[str, Any] = {}
    for name, sequence in inputs["sequences"].items():
        try:
            env = _upstream_env(inputs["databases"][sequence["db"]], sequence.get("domain", "ota"))
        except ValueError as exc:  # v1 knows no taxi orders: its database refuses to load
            results[name] = {"unloadable": str(exc).splitlines()[0]}
            continue
        counter = iter(range(10**6))

        def call(tool: str, arguments: dict[str, Any], env: Any = env, counter: Any = counter) -> str | None:
            message = ToolCall(id=f"c{next(counter)}", name=tool, arguments=arguments, requestor="assistant")
            return env.get_response(message).content

        results[name], created = run_sequence(sequence["calls"], call,
                                              lambda env=env: {k for t in ("orders", "books", "reservations") for k in upstream_state(env).get(t, {})})
        tables = canonical_tables(upstream_state(env), created)
        results[name] = {"results": results[name], "created": len(created), "db_sha256": hashlib.sha256(tables.encode()).hexdigest()}
    env = _upstream_env({})
    schemas = {t.name: t.openai_schema["function"]["parameters"] for t in env.get_tools()}
    cross_tools = {domain: sorted(t.name for t in _upstream_env({}, domain).get_tools())
                   for domain in sorted({q["domain"] for q in inputs["sequences"].values() if "domain" in q})}
    payload = {"upstream": {"repo": UPSTREAMS[version], "commit": UPSTREAM_COMMITS[version]}, "schemas": schemas,
               "cross_domain_tools": cross_tools, "results": results}
    (HERE / f"expected_ota_{version}.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(version, len(results), "sequences,", len(schemas), "tools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=("inputs", "expected"))
    parser.add_argument("--version", choices=tuple(UPSTREAMS), default="v2", help="which upstream is importable (expected step)")
    args = parser.parse_args()
    write_inputs() if args.step == "inputs" else write_expected(args.version)


if __name__ == "__main__":
    main()

"""A small VitaBench 2.0 dataset in the official ``tasks.json`` format (upstream's ``PersonalizationTask``).

Two users. U1001 has four subtasks in time order: a plain delivery order, a preference update,
an OTA (travel) subtask booking the usual hotel, and a proactive order whose user holds back where it must go. U2002 has two delivery orders
from another store. Interactions use both official shapes: day records ``{date, behavior,
dialogue}`` and events ``{type, timestamp, content}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HOME = "12 Maple Road, Springfield"
OFFICE = "88 Harbour Street, Springfield"
PROACTIVE_INTENTION = "Please deliver it to my office at 88 Harbour Street, I am working late tonight."


def store(store_id: str, name: str, products: list[tuple[str, str, float]]) -> dict[str, Any]:
    return {"name": name, "store_id": store_id, "score": 4.6, "tags": ["Lunch"],
            "location": {"address": f"1 {name} Street", "longitude": 10.0, "latitude": 50.0},
            "products": [{"product_id": pid, "name": pname, "price": price, "tags": [], "store_id": store_id} for pid, pname, price in products]}


STORES = {
    "S1": store("S1", "Green Bowl", [("P1", "Caesar salad", 30.0), ("P2", "Quinoa bowl", 35.0), ("P3", "Peanut noodles", 28.0)]),
    "S2": store("S2", "Sushi Place", [("P7", "Salmon roll", 42.0), ("P8", "Tuna roll", 45.0)]),
}


def delivery_environment(time: str, user_id: str, stores: list[str]) -> dict[str, Any]:
    return {"time": time, "user_id": user_id, "orders": {}, "weather": [], "user_historical_behaviors": {},
            "location": [{"address": HOME, "longitude": 10.01, "latitude": 50.01},
                         {"address": OFFICE, "longitude": 10.02, "latitude": 50.02}],
            "stores": {s: STORES[s] for s in stores}}


def ota_environment(time: str, user_id: str) -> dict[str, Any]:
    """A travel database in upstream's OTA format: two hotels of the conference city, a taxi service."""
    def hotel(hotel_id: str, name: str, rooms: list[tuple[str, str, float, int]]) -> dict[str, Any]:
        return {"hotel_id": hotel_id, "hotel_name": name, "score": 4.5, "star_rating": 4, "tags": ["wifi"],
                "location": {"address": f"{name}, Harbour Street, Springfield", "longitude": 10.03, "latitude": 50.03},
                "products": [{"product_id": pid, "room_type": kind, "price": price, "quantity": n, "date": "2025-03-11"}
                             for pid, kind, price, n in rooms]}

    return {"time": time, "user_id": user_id, "orders": {}, "weather": [], "user_historical_behaviors": {},
            "hotels": {"H1": hotel("H1", "Harbour Hotel", [("R1", "Queen room", 120.0, 3), ("R2", "Suite", 260.0, 1)]),
                       "H2": hotel("H2", "Station Inn", [("R7", "Twin room", 80.0, 5)])},
            "attractions": {}, "flights": {}, "trains": {},
            "taxis": {"X1": {"taxi_id": "X1", "taxi_type": "express", "platform": "RideCo", "estimated_duration": "20 min",
                             "estimated_price": 25.0, "tags": [],
                             "departure_location": {"address": HOME, "longitude": 10.01, "latitude": 50.01},
                             "arrival_location": {"address": "Harbour Hotel, Harbour Street, Springfield", "longitude": 10.03, "latitude": 50.03},
                             "products": [{"product_id": "XP1", "price": 25.0, "quantity": 2, "taxi_type": "express", "platform": "RideCo"}]}}}


HOTEL_ORDER = {"order_id": "EXPECTED", "order_type": "hotel", "store_id": "H1", "status": "paid",
               "products": [{"product_id": "R1", "quantity": 1, "date": "2025-03-11", "room_type": "Queen room"}]}


def criteria(store_id: str, product: str, rubric: str) -> dict[str, Any]:
    order = {"order_id": "EXPECTED", "order_type": "delivery", "store_id": store_id, "status": "paid", "note": "",
             "location": {"address": HOME, "longitude": 10.01, "latitude": 50.01},
             "products": [{"product_id": product, "quantity": 1, "attributes": ""}]}
    return {"expected_states": [{"required_orders": [order], "optional_orders": [], "state_rubrics": [rubric]}],
            "overall_rubrics": ["The assistant does not order anything containing peanuts."]}


def scenario(profile: dict[str, Any], preferences: dict[str, list[str]]) -> dict[str, Any]:
    return {"user_profile": profile, "personalized_preference_memory": {"current": preferences}}


U1_PROFILE = {"user_id": "U1001", "occupation": "nurse", "home address": HOME, "work address": OFFICE}
U2_PROFILE = {"user_id": "U2002", "occupation": "student", "home address": HOME}


def tasks() -> list[dict[str, Any]]:
    """The two users' records, as the official ``tasks.json`` holds them."""
    u1 = [
        {"subtask_id": "u1-s0", "domain": "delivery", "instruction": "Order me lunch, the usual.",
         "environment": delivery_environment("2025-03-01 12:00:00", "U1001", ["S1"]),
         "user_scenario": scenario(U1_PROFILE, {"food": ["quinoa bowl from Green Bowl"], "allergies": ["peanuts"]}),
         "evaluation_criteria": criteria("S1", "P2", "The assistant orders a Quinoa bowl from Green Bowl."),
         "interactions": [{"date": "2025-02-20", "behavior": [
             {"behavior_type": "search", "content": {"keyword": "quinoa bowl"}},
             {"behavior_type": "order", "content": {"scenario": "delivery", "merchant_name": "Green Bowl",
                                                     "items": [{"product_name": "Quinoa bowl", "price": 35.0, "quantity": 1}]}}],
             "dialogue": [{"role": "user", "content": "No peanuts please, I am allergic to peanuts."}]}],
         "skill_tested": [], "user_intention": ""},
        {"subtask_id": "u1-s1", "domain": "delivery", "instruction": "Get me something to eat.",
         "environment": delivery_environment("2025-03-08 12:30:00", "U1001", ["S1"]),
         "user_scenario": scenario(U1_PROFILE, {"food": ["Caesar salad from Green Bowl"], "allergies": ["peanuts"]}),
         "evaluation_criteria": criteria("S1", "P1", "The assistant orders a Caesar salad from Green Bowl."),
         "interactions": [{"type": "review", "timestamp": "2025-03-05 13:00:00",
                           "content": {"merchant_name": "Green Bowl", "rating": 5, "text": "The Caesar salad is my new favourite."}}],
         "skill_tested": ["update"], "user_intention": ""},
        {"subtask_id": "u1-s2", "domain": "ota", "instruction": "Book my usual hotel for the conference.",
         "environment": ota_environment("2025-03-10 09:00:00", "U1001"),
         "user_scenario": scenario(U1_PROFILE, {"travel": ["Harbour Hotel"]}),
         "evaluation_criteria": {"expected_states": [{"required_orders": [HOTEL_ORDER], "optional_orders": []}],
                                 "overall_rubrics": ["The assistant books the Harbour Hotel."]},
         "interactions": [{"type": "order", "timestamp": "2025-03-09 20:00:00",
                           "content": {"scenario": "ota", "merchant_name": "Harbour Hotel", "items": [{"product_name": "Queen room"}]}}],
         "skill_tested": [], "user_intention": ""},
        {"subtask_id": "u1-s3", "domain": "delivery", "instruction": "I need dinner delivered.",
         "environment": delivery_environment("2025-03-12 19:00:00", "U1001", ["S1"]),
         "user_scenario": scenario(U1_PROFILE, {"food": ["Caesar salad from Green Bowl"], "allergies": ["peanuts"]}),
         "evaluation_criteria": criteria("S1", "P1", "The assistant asks where to deliver and orders a Caesar salad."),
         "interactions": [], "skill_tested": ["proactive"], "user_intention": PROACTIVE_INTENTION},
    ]
    u2 = [
        {"subtask_id": "u2-s0", "domain": "delivery", "instruction": "Lunch please.",
         "environment": delivery_environment("2025-04-01 12:00:00", "U2002", ["S2"]),
         "user_scenario": scenario(U2_PROFILE, {"food": ["salmon roll from Sushi Place"]}),
         "evaluation_criteria": criteria("S2", "P7", "The assistant orders a Salmon roll from Sushi Place."),
         "interactions": [{"date": "2025-03-30", "behavior": [{"behavior_type": "order", "content": {
             "scenario": "delivery", "merchant_name": "Sushi Place", "items": [{"product_name": "Salmon roll"}]}}]}],
         "skill_tested": [], "user_intention": ""},
        {"subtask_id": "u2-s1", "domain": "delivery", "instruction": "Something different from last time.",
         "environment": delivery_environment("2025-04-03 12:00:00", "U2002", ["S2"]),
         "user_scenario": scenario(U2_PROFILE, {"food": ["tuna roll from Sushi Place"]}),
         "evaluation_criteria": {"overall_rubrics": ["The assistant orders a roll the user has not had before."]},
         "interactions": [{"type": "search", "timestamp": "2025-04-02 18:00:00", "content": {"keyword": "tuna roll"}}],
         "skill_tested": [], "user_intention": ""},
    ]
    return [{"id": "U1001", "user_id": "U1001", "user_profile": U1_PROFILE, "subtasks": u1},
            {"id": "U2002", "user_id": "U2002", "user_profile": U2_PROFILE, "subtasks": u2}]


def write(path: Path) -> Path:
    """Write the dataset as ``path`` (a ``tasks.json``) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tasks(), ensure_ascii=False, indent=1), encoding="utf-8")
    return path

"""VitaBench OTA: the oracle's plan for travel orders reaches the expected state, and the state check
judges travel orders (on the OTA conformance database, ``tests/conformance/vitabench/inputs_ota.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.envs.vitabench.oracle import plan_calls
from agentgym_suite.envs.vitabench.scoring import score_states
from agentgym_suite.envs.vitabench.tools import VitaTools

DB = json.loads((Path(__file__).resolve().parents[1] / "conformance" / "vitabench" / "inputs_ota.json").read_text())["databases"]["base"]


def order(order_type: str, store_id: str, status: str, *products: dict[str, Any], order_id: str = "EXPECTED") -> dict[str, Any]:
    return {"order_id": order_id, "order_type": order_type, "store_id": store_id, "status": status, "products": list(products)}


def play(expected: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any], str | None]], bool, list[str], Any]:
    toolkit = VitaTools("ota-oracle", "ota", DB, version=2)
    plan = plan_calls("ota", expected, DB, toolkit.db)
    for name, args, then in plan:
        before = set(toolkit.db["orders"])
        toolkit.call(name, **args)
        created = sorted(set(toolkit.db["orders"]) - before)
        if then and created:
            toolkit.call(then, order_id=created[0])
    ok, problems = score_states([expected], DB, toolkit.db)
    return plan, ok, problems, toolkit


@pytest.mark.parametrize("record", [
    order("hotel", "H1", "paid", {"product_id": "R1", "quantity": 1}),
    order("attraction", "A1", "paid", {"product_id": "T1", "quantity": 3, "date": "2025-07-02"}),
    order("flight", "F1", "unpaid", {"product_id": "S2", "quantity": 2}),  # no date given: the seat's own date
    order("train", "TR1", "paid", {"product_id": "C3", "quantity": 1, "date": "2025-07-02"}),
    order("hotel", "H1", "paid", {"product_id": "R1", "quantity": 1}, {"product_id": "R3", "quantity": 1}),  # one order per room
], ids=["hotel", "attraction", "flight-unpaid", "train", "two-rooms"])
def test_oracle_books_each_kind_of_travel_order(record: dict[str, Any]) -> None:
    plan, ok, problems, _ = play({"required_orders": [record]})
    assert ok, (plan, problems)
    assert all(name.startswith("create_") and (then is None) == (record["status"] == "unpaid") for name, _, then in plan)


def test_oracle_pays_and_cancels_existing_orders() -> None:
    expected = {"required_orders": [order("hotel", "H1", "paid", order_id="OOHOTEL0001"),
                                     order("train", "TR1", "cancelled", order_id="OOTRAIN0001")]}
    plan, ok, problems, toolkit = play(expected)
    assert ok, problems
    assert [name for name, _, _ in plan] == ["pay_hotel_order", "cancel_train_order"]
    assert toolkit.db["orders"]["OOTRAIN0001"]["status"] == "cancelled"


def test_state_check_rejects_a_wrong_booking() -> None:
    toolkit = VitaTools("ota-wrong", "ota", DB, version=2)
    created = toolkit.call("create_flight_order", flight_id="F1", seat_id="S4", user_id="U100", date="2025-07-02", quantity=1)
    assert created.startswith("Order(")
    ok, problems = score_states([{"required_orders": [order("flight", "F1", "unpaid", {"product_id": "S1", "quantity": 1})]}], DB, toolkit.db)
    assert not ok and any("no order matching" in p for p in problems) and any("unexpected new order" in p for p in problems)

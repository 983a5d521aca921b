"""Regenerate ``tool_results.json``: τ²-bench's tool-result strings for fixed direct tool calls.

Not run by pytest. Each probe is a list of agent-side tool calls made in a fresh environment of its
domain through upstream's own ``Environment.get_response`` (so the strings are serialised by its
``to_json_str``: records dumped by pydantic, datetimes by ``str``, numbers in messages as its tools
compute them, refusals as ``Error: <message>``); the file stores each call's string and error flag.
``tests/conformance/test_tau2_tool_results.py`` makes the same calls through ``Tau2Env``.

Set up the scratch environment as ``README.md`` in this folder says, then::

    /work/scratch/tau2/venv/bin/python tests/conformance/tau2/regenerate_tool_results.py \\
        --upstream-src /work/scratch/tau2/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
UPSTREAM_REPO = "github.com/sierra-research/tau2-bench"


_BOOKING = {"user_id": "sophia_silva_7557", "origin": "ORD", "destination": "PHL", "flight_type": "one_way",
            "cabin": "economy", "flights": [{"flight_number": "HAT271", "date": "2024-05-26"}],
            "passengers": [{"first_name": "Sophia", "last_name": "Silva", "dob": "1957-10-05"},
                           {"first_name": "Kevin", "last_name": "Smith", "dob": "2001-04-12"}],
            "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
"""Airline task 8's gold booking (its payment varied below: short by 8 as an int and as a float, then exact as a float)."""


def probes() -> list[dict[str, Any]]:
    """The calls, grouped by domain and run in a fresh environment per probe (inputs only)."""
    def call(tool_name: str, /, **arguments: Any) -> dict[str, Any]:
        return {"name": tool_name, "arguments": arguments}

    customers = [f"C{n}" for n in range(1001, 1011)]
    return [
        {"domain": "telecom", "calls": [call("get_customer_by_id", customer_id=c) for c in customers]},
        {"domain": "telecom", "calls": [call("get_customer_by_phone", phone_number="555-123-2002"),
                                        call("get_customer_by_name", full_name="John Smith", dob="1985-06-15"),
                                        call("get_customer_by_id", customer_id="C9999"),
                                        call("get_customer_by_phone", phone_number="000")]},
        {"domain": "telecom", "calls": [call("get_bills_for_customer", customer_id=c) for c in customers[:4]]},
        {"domain": "telecom", "calls": [call("get_details_by_id", id=i) for i in
                                        ("L1001", "L1002", "B1001", "D1001", "P1001", "C1001", "X1")]},
        {"domain": "telecom", "calls": [call("get_data_usage", customer_id="C1001", line_id="L1001"),
                                        call("refuel_data", customer_id="C1001", line_id="L1001", gb_amount=2),
                                        call("refuel_data", customer_id="C1001", line_id="L1001", gb_amount=1.5),
                                        call("get_bills_for_customer", customer_id="C1001"),
                                        call("refuel_data", customer_id="C1001", line_id="L1001", gb_amount=-1),
                                        call("refuel_data", customer_id="C1001", line_id="L9", gb_amount=1)]},
        {"domain": "telecom", "calls": [call("enable_roaming", customer_id="C1001", line_id="L1001"),
                                        call("enable_roaming", customer_id="C1001", line_id="L1001"),
                                        call("disable_roaming", customer_id="C1001", line_id="L1001"),
                                        call("suspend_line", customer_id="C1001", line_id="L1002", reason="travel"),
                                        call("resume_line", customer_id="C1001", line_id="L1002"),
                                        call("get_available_plan_ids"),
                                        call("send_payment_request", customer_id="C1001", bill_id="B1001")]},
        {"domain": "telecom", "calls": [call("get_customer_by_id"), call("get_customer_by_id", customer_id="C1001", extra=1),
                                        call("refuel_data", customer_id="C1001", line_id="L1001")]},
        # arguments of the wrong JSON type: upstream hands them to the tool unchecked (no pydantic validation of the
        # call), so the tool answers in its own words, raises, or succeeds (pydantic records it builds coerce)
        {"domain": "telecom", "calls": [call("get_customer_by_id", customer_id=1001),
                                        call("refuel_data", customer_id="C1001", line_id="L1001", gb_amount="2"),
                                        call("get_customer_by_id", customer_id=["C1001"]),
                                        call("get_customer_by_id", customer_id={"id": "C1001"}),
                                        call("get_details_by_id", id=1001),
                                        call("get_bills_for_customer", customer_id="C1001", limit="2"),
                                        call("get_bills_for_customer", customer_id="C1001", limit=1.5),
                                        call("get_bills_for_customer", customer_id="C1001", limit=True),
                                        call("get_customer_by_phone", phone_number=5551232002),
                                        call("get_customer_by_name", full_name="John Smith", dob=19850615)]},
        {"domain": "telecom", "calls": [call("refuel_data", customer_id="C1001", line_id="L1001", gb_amount=True),
                                        call("get_data_usage", customer_id="C1001", line_id="L1001"),
                                        call("suspend_line", customer_id="C1001", line_id="L1002", reason=5),
                                        call("get_details_by_id", id="L1002"),
                                        call("enable_roaming", customer_id="C1001", line_id=1001),
                                        call("send_payment_request", customer_id="C1001", bill_id=["B1001"])]},
        {"domain": "retail", "calls": [call("calculate", expression=244), call("calculate", expression=["2 + 2"]),
                                       call("get_order_details", order_id=5512345),
                                       call("get_order_details", order_id=["#W2378156"]),
                                       call("get_user_details", user_id={"id": "yusuf_rossi_9620"}),
                                       call("get_product_details", product_id=6086499569),
                                       call("get_item_details", item_id=1008292230),
                                       call("find_user_id_by_email", email=7),
                                       call("find_user_id_by_name_zip", first_name="Yusuf", last_name="Rossi",
                                            zip=19122),
                                       call("transfer_to_human_agents", summary=["help"])]},
        {"domain": "retail", "calls": [call("modify_pending_order_items", order_id="#W2974929",
                                            item_ids="3877188862", new_item_ids="3877188862",
                                            payment_method_id="paypal_7916550"),
                                       call("modify_pending_order_payment", order_id="#W2974929",
                                            payment_method_id=["paypal_7916550"]),
                                       call("cancel_pending_order", order_id="#W2974929", reason=1),
                                       call("modify_pending_order_address", order_id="#W2974929", address1=1,
                                            address2="", city="Philadelphia", state="PA", country="USA", zip=19122),
                                       call("get_order_details", order_id="#W2974929"),
                                       call("modify_user_address", user_id="yusuf_rossi_9620", address1="1 Main St",
                                            address2=None, city="Philadelphia", state="PA", country="USA",
                                            zip=19122),
                                       call("get_user_details", user_id="yusuf_rossi_9620")]},
        {"domain": "airline", "calls": [call("get_reservation_details", reservation_id=4519),
                                        call("get_user_details", user_id=["mia_li_3668"]),
                                        call("search_direct_flight", origin="JFK", destination="SEA", date=20240516),
                                        call("search_onestop_flight", origin=["JFK"], destination="SEA",
                                             date="2024-05-16"),
                                        call("get_flight_status", flight_number=271, date="2024-05-16"),
                                        call("send_certificate", user_id="mia_li_3668", amount="100"),
                                        call("send_certificate", user_id="mia_li_3668", amount=50.5),
                                        call("get_user_details", user_id="mia_li_3668"),
                                        call("cancel_reservation", reservation_id=["NO6JO3"])]},
        {"domain": "airline", "calls": [call("update_reservation_baggages", reservation_id="NO6JO3",
                                             total_baggages="3", nonfree_baggages=0,
                                             payment_id="credit_card_4421486"),
                                        call("update_reservation_baggages", reservation_id="NO6JO3",
                                             total_baggages=2, nonfree_baggages="1",
                                             payment_id="credit_card_4421486"),
                                        call("update_reservation_passengers", reservation_id="NO6JO3",
                                             passengers={"first_name": "A", "last_name": "B", "dob": "2000-01-01"}),
                                        call("update_reservation_flights", reservation_id="NO6JO3", cabin="economy",
                                             flights={"flight_number": "HAT001", "date": "2024-05-20"},
                                             payment_id="credit_card_4421486"),
                                        call("book_reservation", **dict(_BOOKING, total_baggages="1",
                                                                        payment_methods=[
            {"payment_id": "certificate_8045380", "amount": 348}])),
                                        call("book_reservation", **dict(_BOOKING, passengers=_BOOKING["passengers"][0],
                                                                        payment_methods=[
            {"payment_id": "certificate_8045380", "amount": 348}])),
                                        call("get_reservation_details", reservation_id="NO6JO3")]},
        {"domain": "banking_knowledge", "calls": [
            call("get_user_information_by_id", user_id=6680), call("get_user_information_by_id", user_id=["6680a37184"]),
            call("get_user_information_by_id", user_id={"id": "6680a37184"}),
            call("get_user_information_by_email", email=5), call("get_referrals_by_user", user_id=123),
            call("get_credit_card_accounts_by_user", user_id=True),
            call("change_user_email", user_id="6680a37184", new_email=123),
            call("get_user_information_by_id", user_id="6680a37184"),
            call("log_verification", name=1, user_id="6680a37184", address=["a"], email="e", phone_number=5,
                 date_of_birth="07/22/1985", time_verified=20251114),
            call("unlock_discoverable_agent_tool", agent_tool_name=5),
            call("unlock_discoverable_agent_tool", agent_tool_name="get_payment_history_6183"),
            call("call_discoverable_agent_tool", agent_tool_name="get_payment_history_6183",
                 arguments={"credit_card_account_id": "x", "months": 3}),
            call("call_discoverable_agent_tool", agent_tool_name="get_payment_history_6183",
                 arguments='{"credit_card_account_id": "x", "months": "3"}'),
            call("call_discoverable_agent_tool", agent_tool_name=["get_payment_history_6183"], arguments="{}"),
            call("transfer_to_human_agents", summary=5)]},
        # the customer's own tools (requestor "user"), called as upstream's orchestrator calls them: unchecked
        {"domain": "telecom", "requestor": "user", "calls": [
            call("set_network_mode_preference", mode=4), call("check_app_status", app_name=5),
            call("check_app_permissions", app_name=["messaging"]),
            call("grant_app_permission", app_name="messaging", permission=["sms"]),
            call("set_apn_settings", apn_settings="internet"), call("toggle_data", extra=1), call("toggle_wifi_calling", on=True),
            call("no_such_tool"), call("check_app_status", app_name="nope"), call("check_app_permissions", app_name="nope"),
            call("grant_app_permission", app_name="nope", permission="sms"),
            call("grant_app_permission", app_name="messaging", permission="camera"),
            call("grant_app_permission", app_name="messaging", permission="STORAGE"),
            call("check_app_status", app_name="messaging")]},
        # a set_apn_settings the phone cannot use: upstream keeps a non-object as the settings, so every later read
        # of the APN fails with an AttributeError naming the field read first; objects are validated by pydantic
        {"domain": "telecom", "requestor": "user", "calls": [
            call("set_apn_settings", apn_settings="internet"), call("check_apn_settings"), call("reset_apn_settings"),
            call("reboot_device"), call("can_send_mms"), call("check_network_status"), call("toggle_airplane_mode"),
            call("toggle_airplane_mode"), call("toggle_data"), call("run_speed_test"), call("check_status_bar"),
            call("set_apn_settings", apn_settings={"apn_name": "internet"}), call("check_apn_settings"),
            call("check_network_status")]},
        {"domain": "telecom", "requestor": "user", "calls": [
            call("set_apn_settings", apn_settings=5), call("reseat_sim_card"),
            call("set_network_mode_preference", mode="4g_only"), call("toggle_roaming"), call("check_apn_settings")]},
        {"domain": "telecom", "requestor": "user", "calls": [
            call("set_apn_settings", apn_settings=None), call("check_apn_settings"),
            call("set_apn_settings", apn_settings=["internet"]), call("reboot_device"), call("can_send_mms")]},
        {"domain": "telecom", "requestor": "user", "calls": [
            call("set_apn_settings", apn_settings={"apn_name": "broken"}), call("check_network_status"),
            call("check_apn_settings"), call("set_apn_settings", apn_settings={"apn_name": "x"}),
            call("set_apn_settings", apn_settings={"mms_port": "80", "mms_proxy": "proxy"}), call("check_apn_settings"),
            call("set_apn_settings", apn_settings={"reset_at_reboot": "yes"}),
            call("set_apn_settings", apn_settings={"reset_at_reboot": "maybe"}),
            call("set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": ""}), call("can_send_mms"),
            call("set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": None}), call("can_send_mms"),
            call("set_apn_settings", apn_settings={"name": "internet", "mms_port": "x"}), call("reset_apn_settings"),
            call("reboot_device"), call("check_apn_settings")]},
        {"domain": "mock", "requestor": "user", "calls": [call("dismiss_notification", notification_id=5),
                                                          call("dismiss_notification")]},
        {"domain": "airline", "calls": [call("calculate", expression=e) for e in
                                        ("2**3", "7 // 2", "2 ** 0.5", "(2)(3)", "1 +", "", "  3  ", "-(-2)", "2 * -3",
                                         "0.1 + 0.2", "10 / 3", "1/3*3", "((1))", "3.", ".5", "1..2", "()")]},
        {"domain": "retail", "calls": [call("calculate", expression="200 + 44"), call("calculate", expression="2 * 3.5"),
                                       call("calculate", expression="10 / 4"), call("calculate", expression="1 / 0"),
                                       call("get_order_details", order_id="#W0000000"),
                                       call("get_user_details", user_id="nobody")]},
        {"domain": "airline", "calls": [call("book_reservation", **dict(_BOOKING, payment_methods=[
            {"payment_id": "certificate_8045380", "amount": amount}])) for amount in (340, 340.0, 348.0)]},
        {"domain": "airline", "calls": [call("calculate", expression="200 + 44"),
                                        call("get_reservation_details", reservation_id="ZZZZZZ"),
                                        call("get_user_details", user_id="nobody"),
                                        call("get_flight_status", flight_number="HAT001", date="2024-05-16")]},
    ]


def run(src: Path) -> list[dict[str, Any]]:
    os.environ.setdefault("TAU2_DATA_DIR", str(src / "data"))
    from loguru import logger

    logger.remove()
    from tau2.data_model.message import ToolCall
    from tau2.registry import registry

    out = []
    for probe in probes():
        if probe["domain"] == "banking_knowledge":  # its tools do not depend on the retrieval configuration
            from tau2.domains.banking_knowledge.environment import get_environment

            env = get_environment(retrieval_variant="no_knowledge")
        else:
            env = registry.get_env_constructor(probe["domain"])()
        results = []
        for number, item in enumerate(probe["calls"]):
            before = env.get_db_hash()
            message = env.get_response(ToolCall(id=f"call_{number}", name=item["name"], arguments=item["arguments"],
                                                requestor=probe.get("requestor", "assistant")))
            after = env.get_db_hash()
            results.append({"content": message.content, "error": bool(message.error), "db_hash": after,
                            "db_changed": after != before})
        out.append({**probe, "results": results})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-src", required=True, help="checkout of tau2-bench at the pinned commit (with data/)")
    args = parser.parse_args()
    src = Path(args.upstream_src)
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    payload = {"upstream": {"repo": UPSTREAM_REPO, "commit": commit or "a2c024725189473d2d7cea3a5cfdbcc67478e41f",
                            "function": "tau2.environment.environment.Environment.get_response"},
               "probes": run(src)}
    (HERE / "tool_results.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

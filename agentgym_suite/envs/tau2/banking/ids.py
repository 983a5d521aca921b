"""Deterministic record ids and the domain's fixed clock (every scenario happens at 2025-11-14 03:40 EST).

Ids are prefixes of the SHA-256 of a seed string built from the record's fields, so the same request
always makes the same record and the database comparison with the gold run is exact.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

TODAY = "11/14/2025"
NOW = datetime(2025, 11, 14, 3, 40, 0)


def hex_id(seed: str, length: int = 16) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``seed``."""
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: str, card_type: str, merchant: str, amount: float, category: str) -> str:
    return "txn_" + hex_id(f"transaction:{user_id}:{card_type}:{merchant}:{amount:.2f}:{category}", 12)


def referral_id(referrer_id: str, account_type: str) -> str:
    return hex_id(f"referral:{referrer_id}:{account_type}")


def application_id(card_type: str, name: str, income: float, subscription: Any) -> str:
    return hex_id(f"credit_card:{card_type}:{name}:{income}:{subscription}")


def verification_id(user_id: str, time_verified: str) -> str:
    return f"{user_id}_" + time_verified.replace(" ", "_").replace(":", "").replace("-", "")


def user_tool_id(name: str) -> str:
    return hex_id(f"user_discoverable_tool:{name}")


def user_tool_call_id(name: str, arguments: dict[str, Any]) -> str:
    return hex_id(f"user_discoverable_tool_call:{name}:{json.dumps(arguments, sort_keys=True)}")


def agent_tool_id(name: str) -> str:
    return hex_id(f"agent_discoverable_tool:{name}")


def dispute_id(user_id: str, transaction: str) -> str:
    return "dsp_" + hex_id(f"dispute:{user_id}:{transaction}", 12)


def referral_link_id(user_id: str, card_name: str) -> str:
    return hex_id(f"referral_link:{user_id}:{card_name}")


def card_order_id(account_id: str, user_id: str, reason: str) -> str:
    return "ccord_" + hex_id(f"credit_card_order:{account_id}:{user_id}:{reason}", 12)


def closure_id(account_id: str, user_id: str) -> str:
    return "clsr_" + hex_id(f"closure_reason:{account_id}:{user_id}", 12)


def flag_id(account_id: str, flag_type: str, expiration: str) -> str:
    return "ccflag_" + hex_id(f"account_flag:{account_id}:{flag_type}:{expiration}", 12)


def limit_request_id(account_id: str, user_id: str, amount: float) -> str:
    return "cli_" + hex_id(f"cli_request:{account_id}:{user_id}:{amount:.2f}", 12)


def debit_order_id(account_id: str, user_id: str, delivery: str) -> str:
    return "dcord_" + hex_id(f"debit_card_order:{account_id}:{user_id}:{delivery}", 12)


def debit_card_id(account_id: str, user_id: str, issue_date: str) -> str:
    return "dbc_" + hex_id(f"debit_card:{account_id}:{user_id}:{issue_date}", 12)

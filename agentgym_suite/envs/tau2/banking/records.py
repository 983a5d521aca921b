"""The banking database: its tables, record queries and upstream's text rendering of query results.

The database is a dict ``{table: {"data": {record_id: record}, "notes": str}}`` holding every table
upstream's transactional model declares, in its order (tables absent from ``db.json`` start empty).
Writes go only to those tables: a record for any other table is dropped, as upstream's model has no
field to hold it.
"""

from __future__ import annotations

import json
import operator
from typing import Any, Callable

TABLES = (
    "users", "accounts", "debit_cards", "referrals", "credit_card_applications", "user_discoverable_tools",
    "user_discoverable_tool_calls", "verification_history", "credit_card_transaction_history", "cash_back_disputes",
    "bank_account_transaction_history", "credit_card_accounts", "agent_discoverable_tools", "task_config",
    "human_transfer_requests", "transaction_disputes", "credit_card_orders", "debit_card_orders",
    "credit_card_closure_reasons", "credit_card_account_flags", "credit_limit_increase_requests", "payment_history",
    "debit_card_disputes",
)
"""Every table of the database, in the order upstream declares them."""

QUERYABLE = (
    "users", "accounts", "referrals", "credit_card_applications", "user_discoverable_tools",
    "user_discoverable_tool_calls", "agent_discoverable_tools", "task_config", "verification_history",
    "credit_card_transaction_history", "cash_back_disputes", "bank_account_transaction_history", "credit_card_accounts",
    "human_transfer_requests", "transaction_disputes", "credit_card_orders", "credit_card_closure_reasons",
    "credit_card_account_flags", "debit_cards", "debit_card_orders", "debit_card_disputes",
    "credit_limit_increase_requests", "payment_history",
)
"""The tables a text query may name, in the order upstream lists them in its error message."""


def complete(db: dict[str, Any]) -> dict[str, Any]:
    """``db`` with every table present (``{"data": {}, "notes": ""}`` for missing ones), in upstream's order."""
    out: dict[str, Any] = {}
    for name in TABLES:
        table = db.get(name) or {}
        out[name] = {"data": dict(table.get("data") or {}), "notes": str(table.get("notes") or "")}
    return out


def rows(db: dict[str, Any], table: str) -> dict[str, dict[str, Any]]:
    """The records of ``table`` (id -> record), live."""
    return db[table]["data"]


def add(db: dict[str, Any], table: str, record_id: str, record: dict[str, Any]) -> bool:
    """Insert a record; False when the table is unknown or the id is taken (nothing changes then)."""
    if table not in db or record_id in db[table]["data"]:
        return False
    db[table]["data"][record_id] = record
    return True


def update(db: dict[str, Any], table: str, record_id: str, changes: dict[str, Any]) -> bool:
    """Set fields of an existing record; False when it does not exist."""
    if table not in db or record_id not in db[table]["data"]:
        return False
    db[table]["data"][record_id].update(changes)
    return True


def _contains(a: Any, b: Any) -> bool:
    return b in a if a is not None else False


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le,
    "contains": _contains,
    "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
    "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
    "in": lambda a, b: a in b,
    "nin": lambda a, b: a not in b,
}


def _matches(record: dict[str, Any], constraints: dict[str, Any]) -> bool:
    """``field`` or ``field__op`` constraints (eq, ne, gt, gte, lt, lte, contains, startswith, endswith, in, nin);
    an unknown operator compares for equality, and a comparison that cannot be made does not match."""
    for key, expected in constraints.items():
        field, op = key.rsplit("__", 1) if "__" in key else (key, "eq")
        try:
            if not _OPS.get(op, operator.eq)(record.get(field), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def select(db: dict[str, Any], table: str, **constraints: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(record_id, record)`` pairs of ``table`` matching ``constraints``, in stored order."""
    if table not in QUERYABLE:
        return []
    return [(rid, rec) for rid, rec in db[table]["data"].items() if _matches(rec, constraints)]


def listing(table: str, found: list[tuple[str, dict[str, Any]]]) -> str:
    """Records as upstream's query tool lists them (numbered, one ``field: value`` line each)."""
    lines = [f"Found {len(found)} record(s) in '{table}':\n"]
    for index, (record_id, record) in enumerate(found, 1):
        lines.append(f"{index}. Record ID: {record_id}")
        lines.extend(f"   {field}: {value}" for field, value in record.items())
        lines.append("")
    return "\n".join(lines)


def query_text(db: dict[str, Any], table: str, constraints: str = "{}") -> str:
    """A query written as JSON constraints, answered as text the way upstream's query tool answers."""
    try:
        if table not in QUERYABLE:
            return f"Error: Database '{table}' not found. Available: {list(QUERYABLE)}"
        try:
            parsed = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON: {exc}"
        found = select(db, table, **parsed)
        if not found:
            return f"No records found in '{table}'."
        return listing(table, found)
    except Exception as exc:  # upstream answers any failure of the query as text
        return f"Error querying database: {exc}"


def query_field(db: dict[str, Any], table: str, field: str, value: Any) -> str:
    """``query_text`` for one equality constraint, with the JSON spelled as upstream builds it by string formatting
    (a value holding a quote or backslash makes it invalid JSON, and the answer says so)."""
    return query_text(db, table, f'{{"{field}": "{value}"}}')  # formatted as upstream's f-string (any value's str)


def found_nothing(text: str) -> bool:
    """Whether a ``query_text`` answer is upstream's "nothing found" answer."""
    return "No records found" in text or "No results found" in text


def parse_amount(value: Any) -> float:
    """A balance given as a number or as text such as ``'$2,850.00'``."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def balance(account: dict[str, Any]) -> float:
    """An account's balance (``current_holdings``, else ``balance``)."""
    return parse_amount(account.get("current_holdings", account.get("balance", 0)))

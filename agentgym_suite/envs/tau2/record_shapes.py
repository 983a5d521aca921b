"""Record shapes of the tau2 domains, so tool results read field for field as τ²-bench's do.

τ²-bench keeps its databases as typed records and renders a tool's return value from them:
every field of the record type, in the type's declared order, unset optional fields as
``null``. This suite keeps plain dicts as the data files give them (fields in file order, unset
fields absent), so before a result is rendered :func:`canonical` rewrites each dict that is a
known record (recognised by the keys that identify its type, and having no key the type lacks)
into that field order with the missing optional fields set to None (:func:`rendered` also writes
numbers outside records as strings, as upstream does). Values and the database are left untouched. Checked against upstream's result strings by ``tests/conformance/test_tau2.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Shape:
    """One record type: the keys that identify it, its fields in order, and which may be unset."""

    identity: frozenset[str]
    fields: tuple[str, ...]
    optional: frozenset[str] = frozenset()
    integers: frozenset[str] = frozenset()
    """Fields typed as integers (or maps of them): a whole float is written as an integer."""
    decimals: frozenset[str] = frozenset()
    """Fields typed as floats: an integer is written as a float."""
    datetimes: frozenset[str] = frozenset()
    """Fields typed as ``datetime``: upstream's JSON fallback writes them with ``str``, a space between
    date and time (``2025-01-15 10:30:00``), where the data file has ISO text with ``T``."""


def _shape(identity: str, fields: str, optional: str = "", integers: str = "", decimals: str = "",
           datetimes: str = "") -> Shape:
    return Shape(frozenset(identity.split()), tuple(fields.split()), frozenset(optional.split()),
                 frozenset(integers.split()), frozenset(decimals.split()), frozenset(datetimes.split()))


_RETAIL = (
    _shape("order_id items", "order_id user_id address items status fulfillments payment_history cancel_reason "
           "exchange_items exchange_new_items exchange_payment_method_id exchange_price_difference return_items "
           "return_payment_method_id", "cancel_reason exchange_items exchange_new_items exchange_payment_method_id "
           "exchange_price_difference return_items return_payment_method_id", decimals="exchange_price_difference"),
    _shape("item_id product_id price", "name product_id item_id price options", decimals="price"),
    _shape("item_id available", "item_id options available price", decimals="price"),
    _shape("product_id variants", "name product_id variants"),
    _shape("user_id payment_methods orders", "user_id name address email payment_methods orders"),
    _shape("address1 zip", "address1 address2 city country state zip"),
    _shape("tracking_id item_ids", "tracking_id item_ids"),
    _shape("transaction_type payment_method_id", "transaction_type amount payment_method_id", decimals="amount"),
    _shape("source id last_four", "source id brand last_four"),
    _shape("source id balance", "source id balance", decimals="balance"),
)

_AIRLINE = (
    _shape("reservation_id flights", "reservation_id user_id origin destination flight_type cabin flights passengers "
           "payment_history created_at total_baggages nonfree_baggages insurance status", "status",
           integers="total_baggages nonfree_baggages"),
    _shape("flight_number dates", "flight_number origin destination scheduled_departure_time_est "
           "scheduled_arrival_time_est dates"),
    _shape("flight_number available_seats", "flight_number origin destination status scheduled_departure_time_est "
           "scheduled_arrival_time_est date available_seats prices", "date", integers="available_seats prices"),
    _shape("flight_number date price", "flight_number origin destination date price", integers="price"),
    _shape("user_id saved_passengers", "user_id name address email dob payment_methods saved_passengers membership "
           "reservations"),
    _shape("first_name last_name dob", "first_name last_name dob"),
    _shape("address1 zip", "address1 address2 city country state zip", "address2"),
    _shape("payment_id amount", "payment_id amount", integers="amount"),
    _shape("source id last_four", "source id brand last_four"),
    _shape("source id amount", "source id amount", decimals="amount"),
    _shape("status available_seats", "status available_seats prices", integers="available_seats prices"),
    _shape("status actual_departure_time_est actual_arrival_time_est",
           "status actual_departure_time_est actual_arrival_time_est"),
    _shape("status actual_departure_time_est estimated_arrival_time_est",
           "status actual_departure_time_est estimated_arrival_time_est"),
    _shape("status estimated_departure_time_est estimated_arrival_time_est",
           "status estimated_departure_time_est estimated_arrival_time_est"),
)

_TELECOM = (
    _shape("line_id plan_id", "line_id phone_number status plan_id device_id data_used_gb data_refueling_gb "
           "roaming_enabled contract_end_date last_plan_change_date last_sim_replacement_date suspension_start_date",
           "status device_id data_used_gb data_refueling_gb roaming_enabled contract_end_date last_plan_change_date "
           "last_sim_replacement_date suspension_start_date", decimals="data_used_gb data_refueling_gb"),
    _shape("customer_id full_name", "customer_id full_name date_of_birth email phone_number address account_status "
           "payment_methods line_ids bill_ids created_at last_extension_date goodwill_credit_used_this_year",
           "account_status payment_methods line_ids bill_ids created_at last_extension_date "
           "goodwill_credit_used_this_year", decimals="goodwill_credit_used_this_year", datetimes="created_at"),
    _shape("bill_id period_start", "bill_id customer_id period_start period_end issue_date total_due due_date "
           "line_items status", "line_items status", decimals="total_due"),
    _shape("device_id device_type", "device_id device_type model imei is_esim_capable activated activation_date "
           "last_esim_transfer_date", "imei activated activation_date last_esim_transfer_date",
           datetimes="activation_date last_esim_transfer_date"),
    _shape("plan_id data_limit_gb", "plan_id name data_limit_gb price_per_month data_refueling_price_per_gb",
           decimals="data_limit_gb price_per_month data_refueling_price_per_gb"),
    _shape("description item_type", "description amount date item_type", decimals="amount"),
    _shape("method_type account_number_last_4", "method_type account_number_last_4 expiration_date"),
    _shape("street zip_code", "street city state zip_code"),
)

_MOCK = (
    _shape("task_id title", "task_id title description status", "description"),
    _shape("user_id tasks", "user_id name tasks"),
    _shape("notification_id message", "notification_id message status task_id", "status task_id"),
)

SHAPES: dict[str, tuple[Shape, ...]] = {"retail": _RETAIL, "airline": _AIRLINE, "telecom": _TELECOM, "mock": _MOCK}
"""Record types per domain, the more specific first (the first that fits a dict is its type)."""


def _fits(shape: Shape, record: dict[str, Any]) -> bool:
    return shape.identity.issubset(record) and all(key in shape.fields for key in record)


def canonical(value: Any, shapes: tuple[Shape, ...]) -> Any:
    """``value`` with every dict that is a known record rewritten in its type's field order (a new object)."""
    if isinstance(value, list):
        return [canonical(item, shapes) for item in value]
    if not isinstance(value, dict):
        return value
    shape = next((s for s in shapes if _fits(s, value)), None)
    if shape is None:
        return {key: canonical(item, shapes) for key, item in value.items()}
    out: dict[str, Any] = {}
    for key in shape.fields:
        if key in value:
            item = canonical(value[key], shapes)
            if key in shape.datetimes:
                item = _as_datetime_text(item)
            out[key] = _typed(item, int) if key in shape.integers else _typed(item, float) if key in shape.decimals else item
        elif key in shape.optional:
            out[key] = None
    return out


def _as_datetime_text(value: Any) -> Any:
    """ISO date-time text as ``str(datetime)`` writes it (``T`` -> space); other values unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return str(datetime.fromisoformat(value))
    except ValueError:
        return value


def _typed(value: Any, kind: type) -> Any:
    """``value`` (or each value of a map) as ``kind`` when it is a number of the other kind that converts exactly."""
    if isinstance(value, dict):
        return {key: _typed(item, kind) for key, item in value.items()}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if kind is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind is float and isinstance(value, int):
        return float(value)
    return value


def rendered(value: Any, shapes: tuple[Shape, ...]) -> Any:
    """``value`` as upstream renders a tool's return value before writing it as JSON.

    Records (dicts that are a known record type) come out in their type's shape with their JSON
    types; everything else is walked, and its numbers and booleans become their ``str()``, as
    upstream does for plain values, lists and dicts.
    """
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [rendered(item, shapes) for item in value]
    if isinstance(value, dict):
        if any(_fits(s, value) for s in shapes):
            return canonical(value, shapes)
        return {key: rendered(item, shapes) for key, item in value.items()}
    return value

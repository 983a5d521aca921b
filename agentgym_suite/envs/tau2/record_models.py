"""The record types τ²-bench's tools build from an agent's arguments, as pydantic models.

Upstream calls a tool's Python function with the arguments as the model wrote them (no check of their
JSON types); where the tool then builds a record (an address, a certificate, a reservation and its
parts), pydantic validates it in lax mode: ``"100"`` becomes ``100.0`` for a float field, ``"1"`` becomes
``1`` for an int one, and a value it cannot convert fails with pydantic's own message, which the agent
reads. These models carry upstream's field names, types and order (facts of its data model) so the
toolkits here convert and refuse exactly as upstream's do; the database stays plain dicts
(:meth:`pydantic.BaseModel.model_dump` of a validated record).
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict


class UserAddress(BaseModel):
    """A retail address (``modify_pending_order_address``, ``modify_user_address``)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class Certificate(BaseModel):
    """An airline travel certificate (``send_certificate``)."""

    source: Literal["certificate"]
    id: str
    amount: float


class FlightInfo(BaseModel):
    """A flight asked for in a booking or a flight change."""

    flight_number: str
    date: str


class Passenger(BaseModel):
    """A passenger of a reservation."""

    first_name: str
    last_name: str
    dob: str


class Payment(BaseModel):
    """One payment of a reservation (whole dollars)."""

    payment_id: str
    amount: int


class ReservationFlight(BaseModel):
    """A flight of a reservation with its price."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class Reservation(BaseModel):
    """An airline reservation as ``book_reservation`` builds it."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: Literal["round_trip", "one_way"]
    cabin: Literal["business", "economy", "basic_economy"]
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Literal["yes", "no"]
    status: Literal["cancelled"] | None = None


class APNNames(str, Enum):
    """The APN names telecom's phone knows (upstream's enum: its pydantic error lists these values)."""

    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(BaseModel):
    """The phone's APN configuration as the customer's ``set_apn_settings`` builds it from a dict (no extra keys)."""

    model_config = ConfigDict(extra="forbid")

    apn_name: APNNames = APNNames.INTERNET
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


__all__ = ["APNNames", "APNSettings", "Certificate", "FlightInfo", "Passenger", "Payment", "Reservation", "ReservationFlight", "UserAddress"]

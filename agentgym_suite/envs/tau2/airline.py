"""Airline domain of tau2: flights with per-date status/seats/prices, users, reservations.

The clock is fixed at 2024-05-15 15:00 EST; new reservation ids and certificate ids come from
fixed lists so that replaying the same calls always yields the same database.
"""

from __future__ import annotations

import copy
from typing import Any

from agentgym_suite.envs.tau2.record_models import Certificate, FlightInfo, Passenger, Payment, Reservation, ReservationFlight
from agentgym_suite.envs.tau2.toolkit import INTEGER, NUMBER, STRING, WRITE, CustomerServiceTools, described, tool

NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_NUMBERS = (3221322, 3221323, 3221324)
AIRPORTS = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"), ("DFW", "Dallas"),
    ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"), ("BOS", "Boston"),
    ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("EWR", "Newark"),
    ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)
CABIN = described({"type": "string", "enum": ["basic_economy", "economy", "business"]}, "Cabin class.")
_RES_ID = described(STRING, "Reservation id, e.g. 'ZFA04Y'.")
_USER_ID = described(STRING, "User id, e.g. 'sara_doe_496'.")
_PAYMENT_ID = described(STRING, "Payment id from the user's profile, e.g. 'credit_card_7815826' or 'gift_card_7815826'.")
_FLIGHT_INFO = {
    "type": "object",
    "properties": {
        "flight_number": described(STRING, "Flight number, e.g. 'HAT001'."),
        "date": described(STRING, "Date 'YYYY-MM-DD'."),
    },
    "required": ["flight_number", "date"],
}
_PASSENGER = {
    "type": "object",
    "properties": {
        "first_name": STRING,
        "last_name": STRING,
        "dob": described(STRING, "Date of birth 'YYYY-MM-DD'."),
    },
    "required": ["first_name", "last_name", "dob"],
}
_PAYMENT = {
    "type": "object",
    "properties": {"payment_id": _PAYMENT_ID, "amount": described(NUMBER, "Amount charged to this method.")},
    "required": ["payment_id", "amount"],
}


class AirlineTools(CustomerServiceTools):
    """The airline agent's tools over a ``{"flights", "users", "reservations"}`` database."""

    domain = "airline"

    def _user(self, user_id: str) -> dict[str, Any]:
        user = self.db["users"].get(user_id)
        if user is None:
            raise ValueError(f"User {user_id} not found")
        return user

    def _reservation(self, reservation_id: str) -> dict[str, Any]:
        reservation = self.db["reservations"].get(reservation_id)
        if reservation is None:
            raise ValueError(f"Reservation {reservation_id} not found")
        return reservation

    def _flight(self, flight_number: str) -> dict[str, Any]:
        flight = self.db["flights"].get(flight_number)
        if flight is None:
            raise ValueError(f"Flight {flight_number} not found")
        return flight

    def _flight_date(self, flight_number: str, date: str) -> dict[str, Any]:
        flight = self._flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _direct(self, date: str, origin: str | None = None, destination: str | None = None, leave_after: str | None = None) -> list[dict[str, Any]]:
        found = []
        for flight in self.db["flights"].values():
            day = flight["dates"].get(date)
            if day is None or day.get("status") != "available":
                continue
            if origin is not None and flight["origin"] != origin:
                continue
            if destination is not None and flight["destination"] != destination:
                continue
            if leave_after is not None and flight["scheduled_departure_time_est"] < leave_after:
                continue
            found.append({
                "flight_number": flight["flight_number"],
                "origin": flight["origin"],
                "destination": flight["destination"],
                "status": "available",
                "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
                "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
                "available_seats": dict(day["available_seats"]),
                "prices": dict(day["prices"]),
            })
        return found

    @staticmethod
    def _charge_for_update(user: dict[str, Any], payment_id: str, total: float) -> dict[str, Any] | None:
        method = user["payment_methods"].get(payment_id)
        if method is None:
            raise ValueError("Payment method not found")
        if method["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total:
            raise ValueError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            method["amount"] -= total
        return {"payment_id": payment_id, "amount": total} if total != 0 else None

    # ------------------------------------------------------------------ read tools
    @tool("Get a user's profile: name, address, email, dob, payment methods, saved passengers, membership, reservation ids.",
          user_id=_USER_ID)
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        return self._user(user_id)

    @tool("Get a reservation's details: trip, cabin, flights, passengers, payments, baggage, insurance, status.",
          reservation_id=_RES_ID)
    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        return self._reservation(reservation_id)

    @tool("List all airports served (IATA code and city).")
    def list_all_airports(self) -> list[dict[str, str]]:
        return [{"iata": code, "city": city} for code, city in AIRPORTS]

    @tool("Search direct flights between two airports on a date (only flights still available for booking).",
          origin=described(STRING, "Origin IATA code, e.g. 'JFK'."),
          destination=described(STRING, "Destination IATA code, e.g. 'LAX'."),
          date=described(STRING, "Date 'YYYY-MM-DD'."))
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        return self._direct(date, origin, destination)

    @tool("Search one-stop connections between two airports on a date; each result is a pair of flights.",
          origin=described(STRING, "Origin IATA code, e.g. 'JFK'."),
          destination=described(STRING, "Destination IATA code, e.g. 'LAX'."),
          date=described(STRING, "Date 'YYYY-MM-DD'."))
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[dict[str, Any]]]:
        pairs = []
        for first in self._direct(date, origin=origin):
            first["date"] = date
            second_date = date
            if "+1" in first["scheduled_arrival_time_est"] and len(date) == 10 and date[-2:].isdigit():
                second_date = f"{date[:-2]}{int(date[-2:]) + 1:02d}"
            for second in self._direct(second_date, first["destination"], destination, first["scheduled_arrival_time_est"]):
                second["date"] = second_date
                pairs.append([first, second])
        return pairs

    @tool("Get the status of a flight on a date (available, delayed, on time, flying, landed, cancelled).",
          flight_number=described(STRING, "Flight number, e.g. 'HAT001'."), date=described(STRING, "Date 'YYYY-MM-DD'."))
    def get_flight_status(self, flight_number: str, date: str) -> str:
        return self._flight_date(flight_number, date)["status"]

    # ------------------------------------------------------------------ write tools
    @tool("Book a reservation after explicit user confirmation.", tool_kind=WRITE,
          user_id=_USER_ID,
          origin=described(STRING, "Origin IATA code, e.g. 'SFO'."),
          destination=described(STRING, "Destination IATA code, e.g. 'JFK'."),
          flight_type=described({"type": "string", "enum": ["one_way", "round_trip"]}, "Trip type."),
          cabin=CABIN,
          flights=described({"type": "array", "items": _FLIGHT_INFO}, "Every flight segment of the trip."),
          passengers=described({"type": "array", "items": _PASSENGER}, "Every passenger."),
          payment_methods=described({"type": "array", "items": _PAYMENT}, "Payment methods and the amount charged to each."),
          total_baggages=described(INTEGER, "Total checked bags."),
          nonfree_baggages=described(INTEGER, "Checked bags that are paid for."),
          insurance=described({"type": "string", "enum": ["yes", "no"]}, "Travel insurance."))
    def book_reservation(self, user_id: str, origin: str, destination: str, flight_type: str, cabin: str,
                         flights: list[dict[str, Any]], passengers: list[dict[str, Any]], payment_methods: list[dict[str, Any]],
                         total_baggages: int, nonfree_baggages: int, insurance: str) -> dict[str, Any]:
        # the arguments as given, converted and checked as upstream's tool does it: lists of dicts become its
        # records (pydantic converts or refuses), then the reservation record is validated before any flight is read
        if all(isinstance(info, dict) for info in flights):
            flights = [FlightInfo(**info) for info in flights]
        if all(isinstance(passenger, dict) for passenger in passengers):
            passengers = [Passenger(**passenger) for passenger in passengers]
        if all(isinstance(payment, dict) for payment in payment_methods):
            payment_methods = [Payment(**payment) for payment in payment_methods]
        user = self._user(user_id)
        reservation_id = next((r for r in NEW_RESERVATION_IDS if r not in self.db["reservations"]), None)
        if reservation_id is None:
            raise ValueError("Too many reservations")
        record = Reservation(reservation_id=reservation_id, user_id=user_id, origin=origin, destination=destination,
                             flight_type=flight_type, cabin=cabin, flights=[], passengers=copy.deepcopy(passengers),
                             payment_history=copy.deepcopy(payment_methods), created_at=NOW,
                             total_baggages=total_baggages, nonfree_baggages=nonfree_baggages, insurance=insurance)
        booked, days, total = [], [], 0  # an int, as upstream's total_price: messages say 244, not 244.0
        for info in flights:
            number = info.flight_number
            flight = self._flight(number)
            day = self._flight_date(number, info.date)
            if day.get("status") != "available":
                raise ValueError(f"Flight {number} not available on date {info.date}")
            if day["available_seats"][cabin] < len(passengers):
                raise ValueError(f"Not enough seats on flight {number}")
            price = day["prices"][cabin]
            booked.append(ReservationFlight(origin=flight["origin"], destination=flight["destination"],
                                            flight_number=number, date=info.date, price=price).model_dump())
            days.append(day)
            total += price * len(passengers)
        if insurance == "yes":
            total += 30 * len(passengers)
        total += 50 * nonfree_baggages
        for payment in payment_methods:
            method = user["payment_methods"].get(payment.payment_id)
            if method is None:
                raise ValueError(f"Payment method {payment.payment_id} not found")
            if method["source"] in {"gift_card", "certificate"} and method["amount"] < payment.amount:
                raise ValueError(f"Not enough balance in payment method {payment.payment_id}")
        paid = sum(payment.amount for payment in payment_methods)
        if paid != total:
            raise ValueError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
        for payment in payment_methods:
            method = user["payment_methods"][payment.payment_id]
            if method["source"] == "gift_card":
                method["amount"] -= payment.amount
            elif method["source"] == "certificate":
                user["payment_methods"].pop(payment.payment_id)
        for day in days:
            day["available_seats"][cabin] -= len(passengers)
        reservation = {**record.model_dump(exclude={"status"}), "flights": booked}
        self.db["reservations"][reservation_id] = reservation
        user["reservations"].append(reservation_id)
        return reservation

    @tool("Cancel a whole reservation after explicit user confirmation; every payment is refunded.", tool_kind=WRITE,
          reservation_id=_RES_ID)
    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        reservation = self._reservation(reservation_id)
        refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return reservation

    @tool("Issue a travel certificate (compensation) to a user. Only when the policy allows it.", tool_kind=WRITE,
          user_id=_USER_ID, amount=described(INTEGER, "Certificate amount in dollars."))
    def send_certificate(self, user_id: str, amount: int) -> str:
        user = self._user(user_id)
        for number in NEW_CERTIFICATE_NUMBERS:
            payment_id = f"certificate_{number}"
            if payment_id not in user["payment_methods"]:
                # built as upstream's Certificate (its amount converted to a float, or refused, by pydantic)
                user["payment_methods"][payment_id] = Certificate(source="certificate", id=payment_id, amount=amount).model_dump()
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    @tool("Change the checked-bag counts of a reservation after explicit user confirmation; extra paid bags cost $50 each.",
          tool_kind=WRITE, reservation_id=_RES_ID, total_baggages=described(INTEGER, "New total checked bags."),
          nonfree_baggages=described(INTEGER, "New number of paid bags."), payment_id=_PAYMENT_ID)
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str) -> dict[str, Any]:
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        total = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._charge_for_update(user, payment_id, total)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"] = total_baggages
        reservation["nonfree_baggages"] = nonfree_baggages
        return reservation

    @tool("Change the flights and/or cabin of a reservation after explicit user confirmation. List every segment of "
          "the new itinerary, unchanged ones included; the fare difference is charged or refunded.", tool_kind=WRITE,
          reservation_id=_RES_ID, cabin=CABIN,
          flights=described({"type": "array", "items": _FLIGHT_INFO}, "All segments of the new itinerary."),
          payment_id=_PAYMENT_ID)
    def update_reservation_flights(self, reservation_id: str, cabin: str, flights: list[dict[str, Any]], payment_id: str) -> dict[str, Any]:
        if all(isinstance(info, dict) for info in flights):  # as upstream: dicts become FlightInfo records
            flights = [FlightInfo(**info) for info in flights]
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        count = len(reservation["passengers"])
        new_flights, total = [], 0
        for info in flights:
            kept = next((f for f in reservation["flights"] if f["flight_number"] == info.flight_number
                         and f["date"] == info.date and cabin == reservation["cabin"]), None)
            if kept is not None:
                total += kept["price"] * count
                new_flights.append(kept)
                continue
            flight = self._flight(info.flight_number)
            day = self._flight_date(info.flight_number, info.date)
            if day.get("status") != "available":
                raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
            if day["available_seats"][cabin] < count:
                raise ValueError(f"Not enough seats on flight {info.flight_number}")
            segment = ReservationFlight(flight_number=info.flight_number, date=info.date, price=day["prices"][cabin],
                                        origin=flight["origin"], destination=flight["destination"]).model_dump()
            total += segment["price"] * count
            new_flights.append(segment)
        total -= sum(f["price"] for f in reservation["flights"]) * count
        payment = self._charge_for_update(user, payment_id, total)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"] = copy.deepcopy(new_flights)
        reservation["cabin"] = cabin
        return reservation

    @tool("Replace the passenger details of a reservation (the number of passengers cannot change).", tool_kind=WRITE,
          reservation_id=_RES_ID, passengers=described({"type": "array", "items": _PASSENGER}, "Every passenger."))
    def update_reservation_passengers(self, reservation_id: str, passengers: list[dict[str, Any]]) -> dict[str, Any]:
        if all(isinstance(passenger, dict) for passenger in passengers):  # as upstream: dicts become Passenger records
            passengers = [Passenger(**passenger).model_dump() for passenger in passengers]
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ValueError("Number of passengers does not match")
        reservation["passengers"] = copy.deepcopy(passengers)
        return reservation

"""Telecom domain of tau2: customers, lines, plans, devices and bills (the agent's side).

The database comes from ``db.toml`` (lists of records). The simulated clock is fixed at
2025-02-25, the date the domain's policy gives. Functions without a ``@tool`` mark are the
tasks' initialisation steps (``set_data_usage``, ``suspend_line_for_overdue_bill``) and
environment assertions; the agent cannot call them. After every call on either side the
customer's phone is re-synchronised with the account (see :mod:`.telecom_sync`).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from agentgym_suite.envs.tau2.telecom_sync import SyncedTools, pair
from agentgym_suite.envs.tau2.toolkit import INTEGER, NUMBER, STRING, WRITE, CustomerServiceTools, DomainTools, described, tool

TODAY = date(2025, 2, 25)
"""The domain's fixed 'today' (the policy says the current time is 2025-02-25 12:08 EST)."""

ACTIVE, SUSPENDED, PENDING_ACTIVATION = "Active", "Suspended", "Pending Activation"
DRAFT, PAID, OVERDUE, AWAITING_PAYMENT = "Draft", "Paid", "Overdue", "AWAITING PAYMENT"

_CUSTOMER_ID = described(STRING, "Customer id, e.g. 'C1001'.")
_LINE_ID = described(STRING, "Line id, e.g. 'L1001' (one of the customer's line_ids).")


def first_of_month(day: date) -> date:
    """The first day of ``day``'s month."""
    return day.replace(day=1)


def next_month_start(day: date) -> date:
    """The first day of the month after ``day``'s."""
    return first_of_month(first_of_month(day) + timedelta(days=32))


class TelecomTools(SyncedTools):
    """The telecom agent's tools over a ``{"plans", "devices", "lines", "customers", "bills"}`` database."""

    domain = "telecom"

    transfer_to_human_agents = CustomerServiceTools.transfer_to_human_agents

    def attach(self, user: DomainTools | None) -> None:
        """Pair with the customer's phone so the two stay in sync after every call on either side."""
        if isinstance(user, SyncedTools):
            pair(self, user)

    # ------------------------------------------------------------------ lookups
    def _find(self, table: str, key: str, value: str, label: str) -> dict[str, Any]:
        for record in self.db.get(table) or []:
            if record.get(key) == value:
                return record
        raise ValueError(f"{label} {value} not found")

    def customer(self, customer_id: str) -> dict[str, Any]:
        """The customer record with ``customer_id``; raises ValueError when there is none."""
        return self._find("customers", "customer_id", customer_id, "Customer with ID")

    def line(self, line_id: str) -> dict[str, Any]:
        """The line record with ``line_id``; raises ValueError when there is none."""
        return self._find("lines", "line_id", line_id, "Line with ID")

    def plan(self, plan_id: str) -> dict[str, Any]:
        """The plan record with ``plan_id``; raises ValueError when there is none."""
        return self._find("plans", "plan_id", plan_id, "Plan with ID")

    def bill(self, bill_id: str) -> dict[str, Any]:
        """The bill record with ``bill_id``; raises ValueError when there is none."""
        return self._find("bills", "bill_id", bill_id, "Bill with ID")

    def line_by_phone(self, phone_number: str) -> dict[str, Any]:
        """The line whose number is ``phone_number`` (compared as written, as upstream compares it); raises
        ValueError when there is none."""
        for line in self.db.get("lines") or []:
            if line["phone_number"] == phone_number:
                return line
        raise ValueError(f"Line with phone number {phone_number} not found")

    def customer_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Line ``line_id`` when it belongs to customer ``customer_id``; raises ValueError otherwise."""
        if line_id not in self.customer(customer_id).get("line_ids", []):
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self.line(line_id)

    def bills_awaiting_payment(self, customer: dict[str, Any]) -> list[dict[str, Any]]:
        """The customer's bills whose status is AWAITING PAYMENT."""
        return [b for b in (self.bill(i) for i in customer.get("bill_ids", [])) if b["status"] == AWAITING_PAYMENT]

    # ------------------------------------------------------------------ read tools
    @tool("Find the customer that owns a phone number (their contact number or one of their lines).",
          phone_number=described(STRING, "Phone number, e.g. '555-123-2002'."))
    def get_customer_by_phone(self, phone_number: str) -> dict[str, Any]:
        for customer in self.db["customers"]:  # the number as given, compared as upstream compares it
            if customer["phone_number"] == phone_number:
                return customer
            for line_id in customer.get("line_ids", []):
                if self.line(line_id)["phone_number"] == phone_number:
                    return customer
        raise ValueError(f"Customer with phone number {phone_number} not found")

    @tool("Get a customer's profile by customer id.", customer_id=_CUSTOMER_ID)
    def get_customer_by_id(self, customer_id: str) -> dict[str, Any]:
        return self.customer(customer_id)

    @tool("Find customers by full name and date of birth (both must match; the name ignores case).",
          full_name=described(STRING, "Full name, e.g. 'John Smith'."),
          dob=described(STRING, "Date of birth as YYYY-MM-DD."))
    def get_customer_by_name(self, full_name: str, dob: str) -> list[dict[str, Any]]:
        return [c for c in self.db["customers"] if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob]

    @tool("Get the record behind an id: a customer (C...), line (L...), device (D...), bill (B...) or plan (P...).",
          id=described(STRING, "The id, e.g. 'L1002' or 'B1003'."))
    def get_details_by_id(self, id: str) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        tables = {"C": ("customers", "customer_id", "Customer with ID"), "L": ("lines", "line_id", "Line with ID"),
                  "D": ("devices", "device_id", "Device with ID"), "B": ("bills", "bill_id", "Bill with ID"),
                  "P": ("plans", "plan_id", "Plan with ID")}
        for prefix in "LDBCP":  # upstream's order of checks, with the value as given
            if id.startswith(prefix):
                return self._find(*tables[prefix][:2], id, tables[prefix][2])
        raise ValueError(f"Unknown ID format or type: {id}")

    @tool("List a customer's bills, newest issue date first.", optional=("limit",), customer_id=_CUSTOMER_ID,
          limit=described(INTEGER, "Most bills to return (default 12)."))
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[dict[str, Any]]:
        bills = [self.bill(i) for i in self.customer(customer_id).get("bill_ids", [])]
        return sorted(bills, key=lambda b: str(b["issue_date"]), reverse=True)[:limit]  # sliced as given, as upstream slices

    @tool("Get a line's data use this billing cycle: GB used, plan limit, GB refuelled and the cycle's end date.",
          customer_id=_CUSTOMER_ID, line_id=_LINE_ID)
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        line = self.customer_line(customer_id, line_id)
        return {
            "line_id": line_id,
            "data_used_gb": line["data_used_gb"],
            "data_limit_gb": self.plan(line["plan_id"])["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"],
            "cycle_end_date": (next_month_start(TODAY) - timedelta(days=1)).isoformat(),
        }

    # ------------------------------------------------------------------ write tools
    @tool("Suspend an active line (at most 6 months; a $5/month holding fee applies).", tool_kind=WRITE,
          customer_id=_CUSTOMER_ID, line_id=_LINE_ID, reason=described(STRING, "Why the line is suspended."))
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        line = self.customer_line(customer_id, line_id)
        if line["status"] != ACTIVE:
            raise ValueError("Line must be active to suspend")
        line["status"] = SUSPENDED
        line["suspension_start_date"] = TODAY.isoformat()
        return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}

    @tool("Resume a suspended (or pending-activation) line: it becomes active again. Check the policy first.",
          tool_kind=WRITE, customer_id=_CUSTOMER_ID, line_id=_LINE_ID)
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        line = self.customer_line(customer_id, line_id)
        if line["status"] not in (SUSPENDED, PENDING_ACTIVATION):
            raise ValueError("Line must be suspended to resume")
        line["status"] = ACTIVE
        line.pop("suspension_start_date", None)
        return {"message": "Line resumed successfully", "line": line}

    @tool("Send the customer a payment request for one of their bills; the bill becomes AWAITING PAYMENT. "
          "It does not check whether the bill is overdue or already paid: check the bill first.", tool_kind=WRITE,
          customer_id=_CUSTOMER_ID, bill_id=described(STRING, "Bill id, e.g. 'B1002'."))
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        customer = self.customer(customer_id)
        if self.bills_awaiting_payment(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer.get("bill_ids", []):
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        self.bill(bill_id)["status"] = AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill_id}"

    @tool("Turn on international roaming for a line.", tool_kind=WRITE, customer_id=_CUSTOMER_ID, line_id=_LINE_ID)
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        line = self.customer_line(customer_id, line_id)
        if line["roaming_enabled"]:
            return "Roaming was already enabled"
        line["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @tool("Turn off international roaming for a line.", tool_kind=WRITE, customer_id=_CUSTOMER_ID, line_id=_LINE_ID)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        line = self.customer_line(customer_id, line_id)
        if not line["roaming_enabled"]:
            return "Roaming was already disabled"
        line["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @tool("Add data to a line for the rest of the cycle; it is charged at the plan's refuelling price per GB "
          "on the customer's next bill.", tool_kind=WRITE, customer_id=_CUSTOMER_ID, line_id=_LINE_ID,
          gb_amount=described(NUMBER, "GB to add (positive), e.g. 2.0."))
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        line = self.customer_line(customer_id, line_id)
        if gb_amount <= 0:  # the value as given (upstream compares it unchecked)
            raise ValueError("Refuel amount must be positive")
        price = self.plan(line["plan_id"])["data_refueling_price_per_gb"]
        charge = gb_amount * price
        line["data_refueling_gb"] = line["data_refueling_gb"] + gb_amount
        self._charge(customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB")
        return {"message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
                "new_data_refueling_gb": line["data_refueling_gb"], "charge": charge}

    def _charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a charge (or a credit, when negative) to the customer's draft bill, opening one when needed."""
        customer = self.customer(customer_id)
        draft = next((b for b in (self.bill(i) for i in customer.get("bill_ids", [])) if b["status"] == DRAFT), None)
        if draft is None:
            start = next_month_start(TODAY)
            draft = {"bill_id": self._new_bill_id(), "customer_id": customer_id, "period_start": start.isoformat(),
                     "period_end": (next_month_start(start) - timedelta(days=1)).isoformat(), "issue_date": start.isoformat(),
                     "total_due": 0.0, "due_date": (start + timedelta(days=14)).isoformat(), "status": DRAFT, "line_items": []}
            self.db["bills"].append(draft)
            customer.setdefault("bill_ids", []).append(draft["bill_id"])
        draft.setdefault("line_items", []).append(
            {"description": description, "amount": amount, "date": TODAY.isoformat(), "item_type": "Credit" if amount < 0 else "Charge"})
        draft["total_due"] = draft["total_due"] + amount

    def _new_bill_id(self) -> str:
        taken = {b["bill_id"] for b in self.db["bills"]}
        number = 9001
        while f"B{number}" in taken:
            number += 1
        return f"B{number}"

    # ------------------------------------------------------------------ task set-up (not tools)
    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set a line's data use this cycle (task initialisation)."""
        self.customer_line(customer_id, line_id)["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool) -> str:
        """Suspend an active line for last month's unpaid plan charge, as bill ``new_bill_id`` (task initialisation)."""
        line = self.line(line_id)
        if line["status"] != ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        customer = self.customer(customer_id)
        if any(self.bill(i)["status"] == OVERDUE for i in customer.get("bill_ids", [])):
            raise ValueError("Customer already has an overdue bill")
        amount = self.plan(line["plan_id"])["price_per_month"]
        last_month_end = first_of_month(TODAY) - timedelta(days=1)
        last_month_start = first_of_month(last_month_end)
        self.db["bills"].append({
            "bill_id": new_bill_id, "customer_id": customer_id, "period_start": last_month_start.isoformat(),
            "period_end": last_month_end.isoformat(), "issue_date": last_month_start.isoformat(), "total_due": amount,
            "due_date": (last_month_start + timedelta(days=14)).isoformat(), "status": OVERDUE,
            "line_items": [{"description": f"Charge for line {line_id}", "amount": amount, "date": TODAY.isoformat(), "item_type": "Charge"}],
        })
        customer.setdefault("bill_ids", []).append(new_bill_id)
        line["status"] = SUSPENDED
        line["suspension_start_date"] = TODAY.isoformat()
        if contract_ended:
            line["contract_end_date"] = last_month_end.isoformat()
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    def set_bill_paid(self, bill_id: str) -> str:
        """Mark a bill paid (used when the customer pays a payment request on their phone)."""
        self.bill(bill_id)["status"] = PAID
        return f"Bill {bill_id} set to paid"

    # ------------------------------------------------------------------ assertions (not tools)
    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """True when the line's refuelled data equals ``expected_amount`` GB."""
        return abs(self.customer_line(customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        """True when the line has status ``expected_status``."""
        return self.customer_line(customer_id, line_id)["status"] == expected_status

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """True when the bill does not exist or has been paid."""
        try:
            return self.bill(overdue_bill_id)["status"] == PAID
        except ValueError:
            return True

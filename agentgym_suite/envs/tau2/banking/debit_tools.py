"""The agent's discoverable debit-card tools: disputes (Regulation E), orders, activation, closing, freezing,
alerts, PINs, limits. Texts, checks and records follow upstream's banking tools exactly (the conformance suite
compares them)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from agentgym_suite.envs.tau2.banking import ids
from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.discoverable import READ, WRITE, discoverable

SEQUENTIAL_PINS = ("0123", "1234", "2345", "3456", "4567", "5678", "6789", "9876", "8765", "7654", "6543", "5432", "4321",
                   "3210")
ACTIVATION_TOOL = {"new_account": "activate_debit_card_8291", "first_card": "activate_debit_card_8291",
                   "lost": "activate_debit_card_8292", "stolen": "activate_debit_card_8292", "fraud": "activate_debit_card_8292",
                   "expired": "activate_debit_card_8293", "damaged": "activate_debit_card_8293",
                   "upgrade": "activate_debit_card_8293", "bank_reissue": "activate_debit_card_8293"}
DEFAULT_ATM_LIMITS = {"blue account": 500, "green account": 600, "light blue account": 400, "green fee-free account": 500,
                      "evergreen account": 750, "bluest account": 1500, "dark green account": 300,
                      "gold years account": 600, "purple account": 1000}


def _title(code: str) -> str:
    return code.replace("_", " ").title()


def pin_problem(pin: str) -> str | None:
    """Why a new PIN is refused (not 4 digits, sequential, one repeated digit), or None."""
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


class DebitCardTools:
    """Mixin of the banking agent toolkit (``self.db`` is the banking database)."""

    db: dict[str, Any]

    def _cards(self) -> dict[str, dict[str, Any]]:
        return R.rows(self.db, "debit_cards")

    @discoverable(WRITE)
    def file_debit_card_transaction_dispute_6281(
        self, transaction_id: str, account_id: str, card_id: str, user_id: str, dispute_category: str,
        transaction_date: str, discovery_date: str, disputed_amount: float, transaction_type: str,
        card_in_possession: bool, pin_compromised: str, contacted_merchant: bool, police_report_filed: bool,
        written_statement_provided: bool, provisional_credit_eligible: bool, customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        if not all([transaction_id, account_id, card_id, user_id, dispute_category, transaction_date, discovery_date,
                    disputed_amount, transaction_type, pin_compromised, card_action]):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if None in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided):
            return ("Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided "
                    "are required boolean fields.")
        categories = ["unauthorized_transaction", "atm_cash_discrepancy", "atm_deposit_not_credited", "duplicate_charge",
                      "incorrect_amount", "goods_services_not_received", "recurring_charge_after_cancellation",
                      "card_present_fraud", "card_not_present_fraud"]
        if dispute_category not in categories:
            return f"Error: Invalid dispute_category. Must be one of: {categories}"
        kinds = ["pin_purchase", "signature_purchase", "online_purchase", "atm_withdrawal", "atm_deposit",
                 "recurring_payment", "person_to_person"]
        if transaction_type not in kinds:
            return f"Error: Invalid transaction_type. Must be one of: {kinds}"
        pin_states = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pin_states:
            return f"Error: Invalid pin_compromised. Must be one of: {pin_states}"
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute = ids.dispute_id(user_id, transaction_id)
        fraud = dispute_category in ("unauthorized_transaction", "card_present_fraud", "card_not_present_fraud")
        shared = pin_compromised == "yes_shared"
        record = {
            "dispute_id": dispute, "transaction_id": transaction_id, "account_id": account_id, "card_id": card_id,
            "user_id": user_id, "dispute_category": dispute_category, "transaction_date": transaction_date,
            "discovery_date": discovery_date, "disputed_amount": disputed_amount, "transaction_type": transaction_type,
            "card_in_possession": card_in_possession, "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant, "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount, "card_action": card_action,
            "is_fraud_category": fraud, "pin_shared_voluntarily": shared, "submitted_at": ids.TODAY, "status": "OPEN",
        }
        if not R.add(self.db, "debit_card_disputes", dispute, record):
            return "Error: Dispute may have already been filed for this transaction."
        parts = [f"Dispute ID: {dispute}", f"Transaction: {transaction_id}", f"Account: {account_id}",
                 f"Category: {_title(dispute_category)}", f"Disputed Amount: ${disputed_amount:.2f}",
                 f"Card Action: {_title(card_action)}"]
        parts.append(f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per "
                     "Regulation E." if provisional_credit_eligible else
                     "Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
        if shared:
            parts.append("WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination.")
        if fraud and not police_report_filed and disputed_amount > 500:
            parts.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
        return "\n".join(parts)

    @discoverable(WRITE)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self._cards().get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be ACTIVE."
        card["recurring_blocked"] = block_recurring
        if block_recurring:
            return (f"Recurring payments BLOCKED for debit card {card_id}.\nAll recurring/subscription charges will be "
                    "declined.\nOne-time purchases are not affected.\nThis change takes effect within 24 hours.")
        return (f"Recurring payments UNBLOCKED for debit card {card_id}.\nRecurring/subscription charges will now be "
                "allowed.\nThis change takes effect within 24 hours.")

    @discoverable(READ)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        if not user_id:
            return "Error: Missing required parameter: user_id"
        found = R.query_field(self.db, "debit_card_disputes", "user_id", user_id)
        return "\n".join(["Debit card dispute history retrieved successfully.", "", "Executed: get_debit_dispute_status_7483",
                          f"Debit card dispute history for user {user_id}:",
                          "\nNo debit card disputes found for this user." if R.found_nothing(found) else found])

    @discoverable(WRITE)
    def order_debit_card_5739(self, account_id: str, user_id: str, delivery_option: str, delivery_fee: float,
                              card_design: str, design_fee: float, shipping_address: str,
                              excess_replacement_fee: float | None = None) -> str:
        excess: Any = excess_replacement_fee or 0
        try:
            delivery_fee = float(delivery_fee) if delivery_fee is not None else None  # type: ignore[assignment]
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design_fee = float(design_fee) if design_fee is not None else None  # type: ignore[assignment]
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        if not all([account_id, user_id, delivery_option, delivery_fee is not None, card_design, design_fee is not None,
                    shipping_address]):
            return ("Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, "
                    "card_design, design_fee, shipping_address.")
        speeds = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in speeds:
            return f"Error: Invalid delivery_option. Must be one of: {speeds}"
        delivery_option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return f"Error: Invalid card_design. Must be one of: {designs}"
        card_design = card_design.upper()
        accounts = R.rows(self.db, "accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a "
                    f"{account.get('class')} account.")
        if account.get("status") != "OPEN":
            return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:  # upstream strips thousands separators only: a "$" makes the balance read as 0
            funds = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            funds = 0.0
        if funds < 25.0:
            return f"Error: Account must have a minimum balance of $25. Current balance: ${funds:.2f}"
        for order in R.rows(self.db, "debit_card_orders").values():
            if order.get("account_id") == account_id and order.get("status") == "PENDING":
                return f"Error: There is already a pending debit card order for account '{account_id}'."
        if sum(1 for c in self._cards().values() if c.get("account_id") == account_id and c.get("status") == "ACTIVE") >= 1:
            return (f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking "
                    "account.")
        total = delivery_fee + design_fee + excess
        if total > 0 and funds < total:
            return f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: ${funds:.2f}"
        expected = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days", "RUSH": "1-2 business days"}[delivery_option]
        order_id = ids.debit_order_id(account_id, user_id, delivery_option)
        order = {"order_id": order_id, "account_id": account_id, "user_id": user_id, "delivery_option": delivery_option,
                 "card_design": card_design, "shipping_address": shipping_address, "delivery_fee": delivery_fee,
                 "design_fee": design_fee, "excess_replacement_fee": excess, "total_fee": total,
                 "order_date": ids.TODAY, "expected_delivery": expected, "status": "PENDING"}
        if not R.add(self.db, "debit_card_orders", order_id, order):
            return "Error: Failed to create debit card order. Order may already exist."
        if total > 0:
            account["current_holdings"] = f"{funds - total:.2f}"
            items = []
            if delivery_fee > 0:
                items.append(f"Delivery ${delivery_fee}")
            if design_fee > 0:
                items.append(f"Design ${design_fee}")
            if excess > 0:
                items.append(f"Excess Replacement ${excess:.0f}")
            fee_txn = f"btxn_dcfee_{order_id[-8:]}"
            R.add(self.db, "bank_account_transaction_history", fee_txn, {
                "transaction_id": fee_txn, "account_id": account_id, "date": ids.TODAY,
                "description": f"DEBIT CARD ORDER FEE - {', '.join(items)}", "amount": -total,
                "type": "debit_card_fee", "status": "posted"})
        card_id = ids.debit_card_id(account_id, user_id, ids.TODAY)
        seed = f"card_details:{card_id}"
        last_4 = "".join(c for c in ids.hex_id(seed + ":last4", 8) if c.isdigit())[:4].zfill(4)
        cvv = "".join(c for c in ids.hex_id(seed + ":cvv", 6) if c.isdigit())[:3].zfill(3)
        user = R.rows(self.db, "users").get(user_id)
        holder = user.get("name", "CARDHOLDER").upper() if user is not None else "CARDHOLDER"
        month, _, year = ids.TODAY.split("/")
        day = "31" if month in ("01", "03", "05", "07", "08", "10", "12") else "28" if month == "02" else "30"
        existing = [c for c in self._cards().values() if c.get("account_id") == account_id]
        closed = next((c for c in existing if c.get("status") == "CLOSED"), None)
        if closed:
            why = closed.get("closure_reason", "first_card")
            reason = ("fraud" if why == "fraud_suspected" else why) if why in ("lost", "stolen", "fraud", "fraud_suspected") else "first_card"
        else:
            reason = "first_card" if existing else "new_account"
        R.add(self.db, "debit_cards", card_id, {
            "card_id": card_id, "account_id": account_id, "user_id": user_id, "cardholder_name": holder,
            "last_4_digits": last_4, "cvv": cvv, "status": "PENDING", "issue_date": ids.TODAY,
            "expiration_date": f"{month}/{day}/{int(year) + 4}", "card_design": card_design, "issue_reason": reason})
        parts = ["Debit Card Order Confirmed", f"Order ID: {order_id}", f"Card ID: {card_id}", f"Linked Account: {account_id}",
                 f"Delivery Option: {delivery_option}", f"Card Design: {card_design}", f"Shipping Address: {shipping_address}",
                 f"Expected Delivery: {expected}", "",
                 "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card."]
        if total > 0:
            details = []
            if delivery_fee > 0:
                details.append(f"Delivery: ${delivery_fee}")
            if design_fee > 0:
                details.append(f"Design: ${design_fee}")
            if excess > 0:
                details.append(f"Excess Replacement: ${excess:.0f}")
            parts.append(f"Total Fees: ${total:.2f} ({', '.join(details)}) - CHARGED to account {account_id}")
            parts.append(f"New Account Balance: ${funds - total:.2f}")
        else:
            parts.append("Total Fees: $0 (No additional charges)")
        return "\n".join(parts)

    def _activation_problem(self, tool: str, allowed: tuple[str, ...], card_id: str, last_4_digits: str,
                            expiration_date: str, cvv: str, pin: str) -> tuple[str | None, dict[str, Any] | None]:
        if not all([card_id, last_4_digits, expiration_date, cvv, pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin.", None
        problem = pin_problem(pin)
        if problem:
            return f"Error: {problem}", None
        if not cvv.isdigit() or len(cvv) != 3:
            return "Error: CVV must be exactly 3 digits.", None
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits.", None
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found.", None
        reason = card.get("issue_reason", "new_account")
        if reason not in allowed:
            return (f"Error: Wrong activation tool. This card has issue_reason='{reason}'. Please use "
                    f"{ACTIVATION_TOOL.get(reason, 'unknown')} instead of {tool}."), None
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active.", None
        if card.get("status") != "PENDING":
            return (f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. Only "
                    "PENDING cards can be activated."), None
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records.", None
        account = R.rows(self.db, "accounts").get(card.get("account_id")) if card.get("account_id") else None
        if account is not None and account.get("status") != "OPEN":
            return (f"Error: The linked checking account '{card.get('account_id')}' is no longer open. Card cannot be "
                    "activated."), None
        return None, card

    def _retire_others(self, card_id: str, account_id: Any, changes: dict[str, Any]) -> list[str]:
        retired = []
        for other_id, other in self._cards().items():
            if other_id != card_id and other.get("account_id") == account_id and other.get("status") == "ACTIVE":
                other.update(changes)
                retired.append(other_id)
        return retired

    @discoverable(WRITE)
    def activate_debit_card_8291(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        error, card = self._activation_problem("activate_debit_card_8291", ("new_account", "first_card"), card_id,
                                               last_4_digits, expiration_date, cvv, pin)
        if error or card is None:
            return str(error)
        card["status"], card["activated_date"] = "ACTIVE", ids.TODAY
        retired = self._retire_others(card_id, card.get("account_id"), {
            "status": "DEACTIVATED", "deactivated_date": ids.TODAY, "deactivation_reason": "New card activated"})
        parts = ["New Debit Card Activation Successful", f"Card ID: {card_id}", "Status: ACTIVE",
                 f"Activation Date: {ids.TODAY}", "", "Your card is now ready to use at any ATM or point of sale terminal.",
                 "For security, please sign the back of your card."]
        if retired:
            parts.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(retired)}")
        return "\n".join(parts)

    @discoverable(WRITE)
    def activate_debit_card_8292(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        error, card = self._activation_problem("activate_debit_card_8292", ("lost", "stolen", "fraud"), card_id,
                                               last_4_digits, expiration_date, cvv, pin)
        if error or card is None:
            return str(error)
        reason = card.get("issue_reason", "lost")
        card["status"], card["activated_date"] = "ACTIVE", ids.TODAY
        retired = self._retire_others(card_id, card.get("account_id"), {
            "status": "DEACTIVATED", "deactivated_date": ids.TODAY,
            "deactivation_reason": f"Replacement card activated ({reason})"})
        parts = ["Replacement Debit Card Activation Successful", f"Card ID: {card_id}", f"Replacement Reason: {_title(reason)}",
                 "Status: ACTIVE", f"Activation Date: {ids.TODAY}", "", "Your replacement card is now ready to use.", "",
                 "IMPORTANT SECURITY REMINDERS:", "- Please review your recent transactions for any unauthorized charges",
                 "- Report any suspicious activity immediately"]
        if reason == "fraud":
            parts.append("- Since fraud was suspected, we recommend changing your online banking password")
        if retired:
            parts.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(retired)}")
        return "\n".join(parts)

    @discoverable(WRITE)
    def activate_debit_card_8293(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        error, card = self._activation_problem("activate_debit_card_8293", ("expired", "damaged", "upgrade", "bank_reissue"),
                                               card_id, last_4_digits, expiration_date, cvv, pin)
        if error or card is None:
            return str(error)
        reason = card.get("issue_reason", "expired")
        card["status"], card["activated_date"] = "ACTIVE", ids.TODAY
        graced = self._retire_others(card_id, card.get("account_id"), {
            "status": "GRACE_PERIOD", "grace_period_ends": ids.TODAY,
            "deactivation_reason": f"Reissued card activated ({reason})"})
        parts = ["Reissued Debit Card Activation Successful", f"Card ID: {card_id}", f"Reissue Reason: {_title(reason)}",
                 "Status: ACTIVE", f"Activation Date: {ids.TODAY}", "", "Your reissued card is now ready to use."]
        if graced:
            parts.append(f"\nNote: Your previous card(s) ({', '.join(graced)}) will remain active for 24 hours as a grace period.")
            parts.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if reason in ("expired", "bank_reissue"):
            parts.append("\nReminder: If your card number changed, please update any recurring payments with your new card details.")
        return "\n".join(parts)

    @discoverable(WRITE)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
        if reason.lower() not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        reason = reason.lower()
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") not in ("ACTIVE", "PENDING"):
            return (f"Error: Debit card '{card_id}' cannot be closed. Current status: {card.get('status')}. Only ACTIVE or "
                    "PENDING cards can be closed.")
        previous = card.get("status")
        card.update({"status": "CLOSED", "closed_date": ids.TODAY, "closure_reason": reason})
        parts = ["Debit Card Closed Successfully", f"Card ID: {card_id}", f"Previous Status: {previous}", "New Status: CLOSED",
                 f"Closure Reason: {_title(reason)}", f"Closure Date: {ids.TODAY}", ""]
        if reason in ("lost", "stolen", "fraud_suspected"):
            parts += ["IMPORTANT: This card has been immediately deactivated for security.",
                      "Any pending transactions may still be processed."]
            if reason == "fraud_suspected":
                parts += ["Please advise the customer to review recent transactions and file disputes for any unauthorized "
                          "charges.", "Also recommend changing their online banking password."]
        parts += ["", "Note: This card cannot be reactivated. If the customer needs a new card, they can order one through "
                  "the standard ordering process.",
                  "Any recurring payments linked to this card will need to be updated with new payment information."]
        return "\n".join(parts)

    @discoverable(WRITE)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if card.get("status") != "ACTIVE":
            return (f"Error: Debit card '{card_id}' cannot be frozen. Current status: {card.get('status')}. Only ACTIVE "
                    "cards can be frozen.")
        card["status"], card["frozen_date"] = "FROZEN", ids.TODAY
        return "\n".join(["Debit Card Frozen Successfully", f"Card ID: {card_id}", "Status: FROZEN", f"Frozen Date: {ids.TODAY}",
                          "", "While frozen:", "- All new purchase transactions will be declined",
                          "- Recurring payments and subscriptions will be declined",
                          "- Pending transactions already authorized may still process", "",
                          "To unfreeze, the customer can call customer service or use the mobile app.",
                          "If the card is confirmed lost or stolen, recommend closing the card permanently instead."])

    @discoverable(WRITE)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return (f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. Only FROZEN "
                    "cards can be unfrozen.")
        account = R.rows(self.db, "accounts").get(card.get("account_id")) if card.get("account_id") else None
        if account is not None and account.get("status") != "OPEN":
            return (f"Error: The linked checking account '{card.get('account_id')}' is no longer open. Card cannot be "
                    "unfrozen.")
        card["status"], card["unfrozen_date"] = "ACTIVE", ids.TODAY
        return "\n".join(["Debit Card Unfrozen Successfully", f"Card ID: {card_id}", "Status: ACTIVE",
                          f"Unfrozen Date: {ids.TODAY}", "", "The card is now active and ready to use immediately.",
                          "All transactions will process normally."])

    @discoverable(WRITE)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            card["velocity_blocked"], card["velocity_cleared_date"] = False, ids.TODAY
            return "\n".join(["Velocity Block Cleared Successfully", f"Card ID: {card_id}", f"Cleared Date: {ids.TODAY}", "",
                              "The card is now unblocked and ready for normal use.",
                              "The velocity monitoring will continue - if the same unusual patterns recur,",
                              "the card may be blocked again automatically."])
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return ("Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system and "
                    "cannot be cleared by customer service agents. Please transfer the customer to the security team using "
                    "transfer_to_human_agents.")
        card.update({"fraud_alert_active": False, "alert_source": None, "fraud_alert_cleared_date": ids.TODAY})
        return "\n".join(["Fraud Alert Cleared Successfully", f"Card ID: {card_id}", f"Cleared Date: {ids.TODAY}", "",
                          "The fraud alert has been removed from the card.", "All transactions will process normally.", "",
                          "Remind the customer to review recent transactions and report any unauthorized charges."])

    @discoverable(WRITE)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN reset."
        card.update({"pin_last_changed": ids.TODAY, "pin_locked": False, "pin_attempts_remaining": 3})
        return "\n".join(["Debit Card PIN Reset Successfully", f"Card ID: {card_id}", f"PIN Changed: {ids.TODAY}", "",
                          "The new PIN is effective immediately.", "Your card has been unlocked and is ready to use.",
                          "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.", "",
                          "Security reminder: Never share your PIN with anyone."])

    @discoverable(WRITE)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") != "ACTIVE":
            return f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN changed."
        card["pin_last_changed"] = ids.TODAY
        return "\n".join(["Debit Card PIN Changed Successfully", f"Card ID: {card_id}", f"PIN Changed: {ids.TODAY}", "",
                          "The new PIN is effective immediately.",
                          "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.", "",
                          "Security reminder: Never share your PIN with anyone."])

    @discoverable(READ)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        account = R.rows(self.db, "accounts").get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        if account.get("class", "").lower() not in ("checking", "business_checking"):
            return (f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for checking "
                    "accounts.")
        cards = []
        for card_id, card in self._cards().items():
            if card.get("account_id") != account_id:
                continue
            info = {"card_id": card_id, **card}
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            cards.append(info)
        if not cards:
            return f"No debit cards found for account '{account_id}'."
        cards.sort(key=lambda c: c.get("date_issued") or "", reverse=True)
        return json.dumps(cards, indent=2)

    @discoverable(WRITE)
    def request_temporary_debit_card_limit_increase_8374(self, card_id: str, limit_type: str, new_limit: int) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ("atm", "purchase"):
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            as_float = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not as_float.is_integer():
            return f"Error: new_limit must be an integer, got '{as_float}'."
        limit = int(as_float)
        if limit <= 0:
            return "Error: new_limit must be a positive amount."
        card = self._cards().get(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") != "ACTIVE":
            return (f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. Only ACTIVE cards "
                    "can have limit increases.")
        account_id = card.get("account_id")
        accounts = R.rows(self.db, "accounts")
        if not account_id or account_id not in accounts:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = accounts[account_id]
        if account.get("status") != "OPEN":
            return f"Error: The linked account '{account_id}' is not in good standing. Account status: {account.get('status')}."
        opened = account.get("date_opened")
        if opened:
            try:
                age = (datetime.strptime(ids.TODAY, "%m/%d/%Y") - datetime.strptime(opened, "%m/%d/%Y")).days
            except ValueError:
                age = None
            if age is not None and age < 60:
                return f"Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} days."
        if limit_type == "atm":
            current, field, name = card.get("daily_atm_limit"), "daily_atm_limit", "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return ("Error: Light Green Account (teen checking) cards have policy-based limits that cannot be "
                            "modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety reasons. "
                            "The customer may request the parent/guardian to withdraw cash from their own account if needed.")
                current = DEFAULT_ATM_LIMITS.get(level)
                if current is None:
                    return (f"Error: Could not determine the default ATM limit for account type '{account.get('level')}'. "
                            "Please verify the account type.")
        else:
            current, field, name = card.get("daily_purchase_limit"), "daily_purchase_limit", "Daily Purchase Limit"
        if current is None:
            return (f"Error: The card does not have a {name.lower()} configured. This may be a restricted account type "
                    "where limits are set by account policy and cannot be modified.")
        ceiling = int(current * 1.5)
        if limit > ceiling:
            return (f"Error: Requested limit ${limit} exceeds the maximum allowed temporary increase. Maximum temporary "
                    f"limit is ${ceiling} (150% of current ${current} limit).")
        if limit <= current:
            return f"Error: Requested limit ${limit} is not higher than the current limit of ${current}."
        card.update({field: limit, f"temporary_{limit_type}_limit_increase": True, f"original_{limit_type}_limit": current,
                     f"temporary_{limit_type}_limit_expires": ids.TODAY})
        return "\n".join([
            f"Temporary {name} Increase Granted Successfully", f"Card ID: {card_id}", f"Previous Limit: ${current}",
            f"New Temporary Limit: ${limit}", f"Increase Amount: ${limit - current}", "", "Important Information:",
            "- This temporary increase expires in 24 hours", f"- After expiration, the limit will revert to ${current}",
            "- Only one temporary increase is allowed per 24-hour period", "",
            "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
            "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
            "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs."])

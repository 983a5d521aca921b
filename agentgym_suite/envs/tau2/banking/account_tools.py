"""The agent's discoverable bank-account tools: opening, closing, transfers, credits, interest reports, the
transaction history and ATM-deposit images. Texts, checks and records follow upstream's banking tools exactly
(the conformance suite compares them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentgym_suite.envs.tau2.banking import ids
from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.deposit_images import deposit_images_text
from agentgym_suite.envs.tau2.banking.discoverable import READ, WRITE, discoverable

EARLY_CLOSURE = {
    "checking": {"Light Blue Account": (15, 30), "Light Green Account": (15, 30), "Green Fee-Free Account": (15, 30),
                 "Blue Account": (25, 60), "Green Account": (25, 60), "Evergreen Account": (50, 90),
                 "Bluest Account": (100, 180)},
    "savings": {"Bronze Account": (20, 60), "Silver Account": (35, 90), "Silver Plus Account": (35, 90),
                "Gold Account": (75, 180), "Gold Plus Account": (75, 180), "Gold Years Account": (75, 180),
                "Platinum Account": (150, 270), "Platinum Plus Account": (150, 270), "Diamond Elite Account": (150, 270)},
}
"""Per account class and level: (early-closure fee in dollars, days after opening during which it applies)."""


def _age_days(account: dict[str, Any]) -> int:
    try:
        return (ids.NOW - datetime.strptime(account.get("date_opened", ""), "%m/%d/%Y")).days
    except ValueError:
        return 0


def _kind(account: dict[str, Any]) -> str:
    return account.get("account_type", account.get("class", ""))


def _txn_date(item: tuple[str, dict[str, Any]]) -> datetime:
    text = str(item[1].get("date", ""))
    for fmt in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return datetime.min


class BankAccountTools:
    """Mixin of the banking agent toolkit (``self.db`` is the banking database)."""

    db: dict[str, Any]

    def _eligible(self, user_id: str, account_type: str) -> bool:
        mine = [a for a in R.rows(self.db, "accounts").values() if a.get("user_id") == user_id]
        if account_type == "savings":
            return any(_kind(a) in ("checking", "personal_checking") and a.get("status", "") in ("OPEN", "ACTIVE")
                       and _age_days(a) >= 14 for a in mine)
        if account_type == "business_checking":
            if any(a.get("status") == "CLOSED" for a in mine):
                return False
            return any(_kind(a) in ("checking", "personal_checking") and a.get("status", "") in ("OPEN", "ACTIVE")
                       for a in mine)
        if account_type == "business_savings":
            if any(R.balance(a) < 0 for a in mine):
                return False
            return any(_kind(a) == "business_checking" and a.get("status", "") in ("OPEN", "ACTIVE") and _age_days(a) >= 30
                       for a in mine)
        return True

    @discoverable(WRITE)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        if not user_id or not account_type or not account_class:
            return "Error: Missing required parameters."
        kinds = ["checking", "savings", "business_checking", "business_savings"]
        if account_type not in kinds:
            return f"Error: Invalid account_type. Must be one of: {kinds}"
        if not self._eligible(user_id, account_type):
            return "Error: Account eligibility requirements not met."
        account_id = ids.hex_id(f"account:{user_id}:{account_type}:{account_class}")
        record = {"account_id": account_id, "user_id": user_id, "account_type": account_type,
                  "account_class": account_class, "current_holdings": "0.00", "status": "OPEN", "date_opened": ids.TODAY}
        if not R.add(self.db, "accounts", account_id, record):
            return f"Failed to open account: Account ID '{account_id}' may already exist."
        return (f"Bank account opened successfully!\n  - Account ID: {account_id}\n  - User ID: {user_id}\n"
                f"  - Account Type: {account_type}\n  - Account Class: {account_class}\n  - Status: OPEN\n"
                f"  - Initial Balance: $0.00\n  - Date Opened: {ids.TODAY}")

    @discoverable(WRITE)
    def close_bank_account_7392(self, account_id: str, reason: str = "Customer requested closure",
                                waive_early_closure_fee: bool = False) -> str:
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        accounts = R.rows(self.db, "accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        funds = R.balance(account)
        fee: float = 0.0
        if not waive_early_closure_fee:
            rule = EARLY_CLOSURE.get(account.get("class", ""), {}).get(account.get("level", ""))
            opened = account.get("date_opened", "")
            if rule and opened:
                try:
                    age = (ids.NOW - datetime.strptime(opened, "%m/%d/%Y")).days
                except ValueError:
                    age = None
                if age is not None and age < rule[1]:
                    if funds < rule[0]:
                        return "Error: Account unable to be closed."
                    fee = rule[0]
        if funds - fee != 0:
            return f"Error: Account balance must be $0.00 before closing. Current balance: ${funds:.2f}"
        account.update({"status": "CLOSED", "date_closed": ids.TODAY, "closure_reason": reason,
                        "early_closure_fee_waived": waive_early_closure_fee})
        return (f"Bank account closed successfully!\n  - Account ID: {account_id}\n"
                f"  - Account Type: {account.get('account_type', 'N/A')}\n"
                f"  - Account Class: {account.get('account_class', 'N/A')}\n  - Status: CLOSED\n"
                f"  - Date Closed: {ids.TODAY}\n  - Reason: {reason}\n"
                f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}")

    @discoverable(READ)
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        if not user_id:
            return "Error: Missing required parameter: user_id"
        banks = R.query_field(self.db, "accounts", "user_id", user_id)
        cards = R.query_field(self.db, "credit_card_accounts", "user_id", user_id)
        parts = ["User accounts retrieved successfully.", "", "Executed: get_all_user_accounts_by_user_id_3847",
                 f"Accounts for user {user_id}:", "", "Bank Accounts:",
                 "  No bank accounts found." if R.found_nothing(banks) else banks, "\nCredit Card Accounts:",
                 "  No credit card accounts found." if R.found_nothing(cards) else cards]
        return "\n".join(parts)

    @discoverable(WRITE)
    def transfer_funds_between_bank_accounts_7291(self, source_account_id: str, destination_account_id: str,
                                                  amount: float) -> str:
        if not source_account_id or not destination_account_id or amount is None:
            return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
        try:
            amount = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if amount <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        accounts = R.rows(self.db, "accounts")
        if source_account_id not in accounts:
            return f"Error: Source account '{source_account_id}' not found."
        if destination_account_id not in accounts:
            return f"Error: Destination account '{destination_account_id}' not found."
        source, dest = accounts[source_account_id], accounts[destination_account_id]
        if source.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Source account '{source_account_id}' is not active."
        if dest.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Destination account '{destination_account_id}' is not active."
        have = R.balance(source)
        if have < amount:
            return (f"Error: Insufficient funds. Source account balance is ${have:.2f}, but transfer amount is "
                    f"${amount:.2f}.")
        new_source, new_dest = have - amount, R.balance(dest) + amount
        source["current_holdings"] = f"${new_source:.2f}"
        dest["current_holdings"] = f"${new_dest:.2f}"
        return (f"Transfer completed successfully!\n  - Amount: ${amount:.2f}\n"
                f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
                f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})")

    def _credit(self, account_id: str, amount: Any, credit_type: str, kinds: list[str], classes: tuple[str, ...],
                wrong_class: str, seed: str, descriptions: dict[str, str], money_sign: str) -> str:
        if not account_id or amount is None or not credit_type:
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        if credit_type not in kinds:
            return f"Error: Invalid credit_type. Must be one of: {kinds}"
        accounts = R.rows(self.db, "accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in classes:
            return wrong_class.format(account_id=account_id)
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = R.balance(account)
        after = before + amount
        account["current_holdings"] = f"{money_sign}{after:.2f}"
        txn = "txn_" + ids.hex_id(f"{seed}:{account_id}:{credit_type}:{amount}:{ids.TODAY}")
        R.rows(self.db, "bank_account_transaction_history")[txn] = {
            "transaction_id": txn, "account_id": account_id, "date": ids.TODAY,
            "description": descriptions.get(credit_type, descriptions["*"]), "amount": amount, "type": credit_type,
            "status": "posted"}
        return (f"\nCredit applied successfully!\n  - Transaction ID: {txn}\n  - Account: {account_id}\n"
                f"  - Credit Type: {credit_type}\n  - Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n"
                f"  - New Balance: ${after:.2f}")

    @discoverable(WRITE)
    def apply_checking_account_credit_5829(self, account_id: str, amount: float, credit_type: str) -> str:
        return self._credit(account_id, amount, credit_type, ["rebate_credit", "fee_refund"], ("checking",),
                            "Error: Account '{account_id}' is not a checking account. Credits can only be applied to "
                            "checking accounts.", "checking_credit",
                            {"rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE", "*": "FEE REFUND - CUSTOMER SERVICE"}, "$")

    @discoverable(WRITE)
    def apply_savings_account_credit_6831(self, account_id: str, amount: float, credit_type: str) -> str:
        return self._credit(account_id, amount, credit_type, ["interest_correction", "fee_refund", "goodwill_credit"],
                            ("saving", "savings"), "Error: Account '{account_id}' is not a savings account. This tool "
                            "only applies to savings accounts.", "savings_credit",
                            {"interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
                             "fee_refund": "FEE REFUND - CUSTOMER SERVICE", "*": "GOODWILL CREDIT - CUSTOMER SERVICE"}, "")

    @discoverable(WRITE)
    def submit_interest_discrepancy_report_7294(self, account_id: str, user_id: str, expected_apy: float,
                                                actual_apy: float, amount_difference: float) -> str:
        if not account_id or not user_id or expected_apy is None or actual_apy is None or amount_difference is None:
            return "Error: Missing required parameters."
        try:
            expected_apy, actual_apy, amount_difference = float(expected_apy), float(actual_apy), float(amount_difference)
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = R.rows(self.db, "accounts").get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = R.rows(self.db, "users").get(user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        report = "IDR_" + ids.hex_id(f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{ids.TODAY}")
        # upstream files the report in a table its database does not have, so nothing is stored
        R.add(self.db, "interest_discrepancy_reports", report, {"report_id": report})
        level = account.get("level", "Unknown")
        return (f"\nInterest Discrepancy Report Submitted Successfully!\n  - Report ID: {report}\n"
                f"  - Account: {account_id} ({level})\n  - Customer: {user.get('name', 'Unknown')}\n"
                f"  - Expected APY: {expected_apy}%\n  - Actual APY: {actual_apy}%\n"
                f"  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
                f"  - Amount Difference: ${amount_difference:.2f}\n  - Status: PENDING_REVIEW\n"
                "\nThe backend team will investigate this discrepancy and ensure correct APY calculations are applied "
                "going forward.")

    @discoverable(READ)
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if account_id not in R.rows(self.db, "accounts"):
            return f"Error: Account '{account_id}' not found."
        # most recent first; the sort is stable, so records of one date keep their stored order
        found = sorted(R.select(self.db, "bank_account_transaction_history", account_id=account_id), key=_txn_date,
                       reverse=True)
        parts = ["Bank account transactions retrieved successfully.", "", "Executed: get_bank_account_transactions_9173",
                 f"Transactions for account {account_id}:"]
        parts.append(R.listing("bank_account_transaction_history", found) if found
                     else "\nNo transactions found for this account.")
        return "\n".join(parts)

    @discoverable(READ)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        txns = R.rows(self.db, "bank_account_transaction_history")
        if transaction_id not in txns:
            return f"Error: Transaction '{transaction_id}' not found."
        txn = txns[transaction_id]
        if txn.get("type") != "atm_deposit":
            return (f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM deposit "
                    "transactions.")
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only available "
                    "for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to "
                    "the ATM network.")
        return deposit_images_text(transaction_id, txn)


__all__ = ["BankAccountTools"]

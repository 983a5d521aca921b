"""The customer's tools in the banking domain: applying for a card, referrals, transactions, asking for a human,
and calling the tools the agent hands over (``give_discoverable_user_tool``). They work on the agent's database."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import Any

from agentgym_suite.envs.tau2.banking import ids
from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.discoverable import READ, WRITE, discoverable, discoverable_methods, upstream_names
from agentgym_suite.envs.tau2.toolkit import NUMBER, STRING, DomainTools, described, tool

CARD_TYPES = ["Bronze Rewards Card", "Business Bronze Rewards Card", "Business Gold Rewards Card",
              "Business Platinum Rewards Card", "Business Silver Rewards Card", "Crypto-Cash Back", "Diamond Elite Card",
              "EcoCard", "Gold Rewards Card", "Green Rewards Card", "Platinum Rewards Card", "Silver Rewards Card",
              "Silver Zoom Card"]
REWARD_RATES: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0}, "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5}, "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0}, "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0}, "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0}, "Crypto-Cash Back": {"default": 2.0},
}
"""Cash-back percentage per card type and purchase category (``default`` for the others)."""


@upstream_names("KnowledgeUserTools")
class BankingUserTools(DomainTools):
    """The customer's side (its ``db`` is set to the agent's database when the episode starts)."""

    domain = "banking_knowledge"

    def __init__(self, db: dict[str, Any]) -> None:
        super().__init__(db)
        self.docs_source: Path | None = None

    def _not_given(self, name: str) -> str | None:
        if R.found_nothing(R.query_field(self.db, "user_discoverable_tools", "tool_name", name)):
            return (f"Error: Tool '{name}' has not been given to you by the agent. The agent must first use "
                    "`give_discoverable_user_tool` to give this tool to you.")
        return None

    def _log(self, name: str, args: dict[str, Any]) -> None:
        R.add(self.db, "user_discoverable_tool_calls", ids.user_tool_call_id(name, args),
              {"tool_name": name, "arguments": args, "called_at": ids.TODAY, "status": "CALLED"})

    # ------------------------------------------------------------------ tools the agent hands over
    @discoverable(WRITE)
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        refused = self._not_given("submit_cash_back_dispute_0589")
        if refused:
            return refused
        args = {"user_id": user_id, "transaction_id": transaction_id}
        self._log("submit_cash_back_dispute_0589", args)
        dispute = ids.dispute_id(user_id, transaction_id)
        config = R.rows(self.db, "task_config")
        auto = bool(config) and config.get("dispute_settings", {}).get("auto_resolve_disputes", False)
        record = {"dispute_id": dispute, "user_id": user_id, "transaction_id": transaction_id, "submitted_at": ids.TODAY}
        if auto:
            record.update({"status": "RESOLVED", "resolution": "APPROVED"})
            status = ("Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be "
                      "updated.")
        else:
            record["status"] = "SUBMITTED"
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        added = R.add(self.db, "cash_back_disputes", dispute, record)
        text = ("Cash back dispute submitted successfully. Your case has been queued for review.\n\n"
                f"Executed: submit_cash_back_dispute_0589\nArguments: {json.dumps(args, indent=2)}\n")
        return text + (f"Dispute ID: {dispute}\n{status}" if added else
                       "Note: Dispute may have already been submitted for this transaction.")

    @discoverable(WRITE)
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        refused = self._not_given("get_referral_link")
        if refused:
            return refused
        args = {"user_id": user_id, "card_name": card_name}
        self._log("get_referral_link", args)
        referral = ids.referral_link_id(user_id, card_name)
        added = R.add(self.db, "referrals", referral, {"referral_id": referral, "referrer_id": user_id,
                                                       "referred_account_type": card_name, "referral_status": "NO_PROGRESS",
                                                       "date": ids.TODAY})
        text = ("Referral link generated successfully. Share this link with the person you want to refer.\n\n"
                f"Executed: get_referral_link\nArguments: {json.dumps(args, indent=2)}\n")
        return text + (f"Referral ID: {referral}\nReferral link: https://rhobank.com/refer/{referral}" if added else
                       "Note: A referral link for this card may have already been generated.")

    @discoverable(READ)
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        refused = self._not_given("get_card_last_4_digits")
        if refused:
            return refused
        args = {"credit_card_account_id": credit_card_account_id}
        self._log("get_card_last_4_digits", args)
        if R.found_nothing(R.query_field(self.db, "credit_card_accounts", "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
        last_4 = "".join(c for c in digest if c.isdigit())[:4].ljust(4, "0")
        return ("Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\n"
                f"Arguments: {json.dumps(args, indent=2)}\nLast 4 digits of card: {last_4}")

    @discoverable(WRITE)
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        refused = self._not_given("deposit_check_3847")
        if refused:
            return refused
        args = {"account_id": account_id, "check_amount": check_amount}
        self._log("deposit_check_3847", args)
        try:
            amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if amount <= 0:
            return "Error: Check amount must be positive."
        accounts = R.rows(self.db, "accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = R.balance(account)
        account["current_holdings"] = f"${before + amount:.2f}"
        return ("Check deposited successfully. Funds will be available according to your account's deposit policy.\n\n"
                f"Executed: deposit_check_3847\nArguments: {json.dumps(args, indent=2)}\nCheck deposit processed!\n"
                f"  - Account: {account_id}\n  - Check Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n"
                f"  - New Balance: ${before + amount:.2f}")

    # ------------------------------------------------------------------ listed tools
    @tool("Apply for a credit card.", tool_kind=WRITE, optional=("rho_bank_subscription",),
          card_type=described(STRING, "Type of credit card"), customer_name=described(STRING, "Full legal name"),
          annual_income=described(NUMBER, "Annual income in USD"),
          rho_bank_subscription=described({"type": "boolean"}, "Whether user has Rho-Bank+ subscription"))
    def apply_for_credit_card(self, card_type: str, customer_name: str, annual_income: float,
                              rho_bank_subscription: bool = False) -> str:
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {CARD_TYPES}"
        try:
            income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        application = ids.application_id(card_type, customer_name, income, rho_bank_subscription)
        record = {"application_id": application, "card_type": card_type, "customer_name": customer_name,
                  "annual_income": income, "rho_bank_subscription": rho_bank_subscription, "status": "PENDING",
                  "date": ids.TODAY}
        if not R.add(self.db, "credit_card_applications", application, record):
            return f"Failed to submit application: Record ID '{application}' may already exist."
        return ("Credit card application submitted:\nYour application has been successfully submitted. You will receive "
                "a decision within 5-7 business days via email.")

    @tool("Submit a referral request to refer someone to open an account.", tool_kind=WRITE,
          user_id=described(STRING, "Your user ID (the referrer)"),
          account_type=described(STRING, "The type of account you are referring someone to open"))
    def submit_referral(self, user_id: str, account_type: str) -> str:
        referral = ids.referral_id(user_id, account_type)
        record = {"referral_id": referral, "referrer_id": user_id, "referred_account_type": account_type,
                  "referral_status": "NO_PROGRESS", "date": ids.TODAY}
        if not R.add(self.db, "referrals", referral, record):
            return f"Failed to submit referral: Record ID '{referral}' may already exist."
        return (f"Referral request submitted successfully!\n  - Referral ID: {referral}\n  - Referrer ID: {user_id}\n"
                f"  - Account Type: {account_type}\n  - Status: NO_PROGRESS\n  - Date: {ids.TODAY}\n\n"
                "Share your referral ID with the person you're referring. They will need to use this when applying for "
                "their account.")

    @tool("Call a tool that was given to you by the agent, with the tool name and arguments the agent told you.",
          tool_kind=WRITE, optional=("arguments",),
          discoverable_tool_name=described(STRING, "The name of the discoverable tool to call"),
          arguments=described(STRING, "JSON string of arguments for the tool"))
    def call_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        method = discoverable_methods(type(self)).get(discoverable_tool_name)
        if method is None:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            given = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        params = inspect.signature(method).parameters
        for name, param in params.items():
            if name != "self" and param.default is inspect.Parameter.empty and name not in given:
                return f"Error: Missing required parameter: {name}"
        for name in given:
            if name not in params:
                return f"Error: Unexpected parameter: {name}"
        try:
            return getattr(self, discoverable_tool_name)(**given)
        except TypeError as exc:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {exc}"

    @tool("List all tools that have been given to you by the agent.")
    def list_discoverable_user_tools(self) -> str:
        found = R.query_text(self.db, "user_discoverable_tools", "{}")
        if "No results found" in found:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{found}"

    @tool("Request to be transferred to a human agent for assistance.", tool_kind=WRITE)
    def request_human_agent_transfer(self) -> str:
        existing = R.query_text(self.db, "human_transfer_requests", "{}")
        count = 1 if R.found_nothing(existing) else existing.count("request_id") + 1
        request = f"transfer_request_{count}"
        R.add(self.db, "human_transfer_requests", request,
              {"request_id": request, "request_number": count, "requested_at": ids.TODAY, "status": "PENDING"})
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    @tool("Submit a credit card transaction.", tool_kind=WRITE, user_id=described(STRING, "Your user ID"),
          credit_card_type=described(STRING, 'Type of credit card used (e.g., "Bronze Rewards Card", "Gold Rewards Card")'),
          merchant_name=described(STRING, "Name of the merchant where the purchase was made"),
          amount=described(NUMBER, "Transaction amount in USD (e.g., 127.43)"),
          category=described(STRING, 'Transaction category (e.g., "Groceries", "Dining", "Travel", "Software")'))
    def submit_transaction(self, user_id: str, credit_card_type: str, merchant_name: str, amount: float, category: str) -> str:
        if credit_card_type not in REWARD_RATES:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(REWARD_RATES)}"
        txn = ids.transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rates = REWARD_RATES[credit_card_type]
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record = {"transaction_id": txn, "user_id": user_id, "credit_card_type": credit_card_type,
                  "merchant_name": merchant_name, "transaction_amount": f"${amount:.2f}", "transaction_date": ids.TODAY,
                  "category": category, "status": "COMPLETED", "rewards_earned": f"{points} points"}
        if not R.add(self.db, "credit_card_transaction_history", txn, record):
            return f"Failed to submit transaction: Record ID '{txn}' may already exist."
        return (f"Transaction submitted successfully!\n  - Transaction ID: {txn}\n  - User ID: {user_id}\n"
                f"  - Card Type: {credit_card_type}\n  - Merchant: {merchant_name}\n  - Amount: ${amount:.2f}\n"
                f"  - Category: {category}\n  - Date: {ids.TODAY}\n"
                f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n")

"""The banking agent's toolkit: the listed tools, the unlock/call mechanism of the discoverable tools, and the
knowledge-retrieval tools of the chosen retrieval configuration (see :mod:`.knowledge`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.envs.tau2.banking import ids
from agentgym_suite.envs.tau2.banking import records as R
from agentgym_suite.envs.tau2.banking.account_tools import BankAccountTools
from agentgym_suite.envs.tau2.banking.credit_tools import CreditCardTools
from agentgym_suite.envs.tau2.banking.debit_tools import DebitCardTools
from agentgym_suite.envs.tau2.banking.discoverable import WRITE, discoverable_methods, upstream_names
from agentgym_suite.envs.tau2.banking.knowledge import Retrieval
from agentgym_suite.envs.tau2.banking.tool_docs import SOURCE_NAME, describe, docstrings, for_agent
from agentgym_suite.envs.tau2.toolkit import GENERIC, INTEGER, READ, STRING, DomainTools, described, tool

TRANSFER_REASONS = (
    "fraud_or_security_concern", "account_closure_request", "deceased_account_holder", "legal_or_regulatory_matter",
    "account_ownership_dispute", "complex_billing_dispute", "abusive_customer_behavior", "third_party_inquiry",
    "technical_system_error", "unconfirmed_external_communication", "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer", "specialized_department_required",
    "accessibility_or_special_needs", "customer_frustrated_demands_human", "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason", "request_completed_customer_wants_human_followup", "other",
)
RETRIEVAL_TOOLS = ("KB_search", "grep", "KB_search_bm25", "KB_search_dense")
_USER_ID = described(STRING, "The ID of the user")


@upstream_names("KnowledgeTools")
class BankingTools(CreditCardTools, BankAccountTools, DebitCardTools, DomainTools):
    """The agent's tools over the banking database (``records.TABLES``)."""

    domain = "banking_knowledge"
    shares_user_db = True
    """The customer's tools work on this same database (upstream hands both sides one database object)."""

    def __init__(self, db: dict[str, Any]) -> None:
        super().__init__(R.complete(db) if set(db) != set(R.TABLES) else db)
        self.unlocked: dict[str, Any] = {}
        self.read_log: set[str] = set()
        """Read-only discoverable tools whose calls are logged (those the task's gold actions call), as upstream."""
        self.retrieval: Retrieval | None = None
        self.docs_source: Path | None = None

    @classmethod
    def for_task(cls, db: dict[str, Any], task: dict[str, Any], folder: Any = None) -> BankingTools:
        """A toolkit for ``task``: reads of the discoverable tools its gold actions call are logged; the tool
        descriptions come from ``folder`` (see :mod:`.tool_docs`)."""
        tools = cls(db)
        tools.docs_source = Path(folder) / SOURCE_NAME if folder is not None else None
        for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
            if action.get("name") == "call_discoverable_agent_tool":
                name = (action.get("arguments") or {}).get("agent_tool_name")
                if name:
                    tools.read_log.add(name)
        return tools

    def attach(self, user: DomainTools | None) -> None:
        if user is not None:
            user.db = self.db
            user.docs_source = self.docs_source  # type: ignore[attr-defined]

    def _tool_methods(self) -> list[str]:  # type: ignore[override]
        offered = set(self.retrieval.tool_names()) if self.retrieval is not None else set()
        return [name for name in DomainTools._tool_methods.__func__(type(self))  # type: ignore[attr-defined]
                if name not in RETRIEVAL_TOOLS or name in offered]

    def _describe(self, name: str, fn: Any) -> dict[str, Any]:
        if self.docs_source is None:
            raise ValueError("the banking tool descriptions are missing: run `agentgym data fetch tau2`")
        return describe(name, docstrings(str(self.docs_source)).get(name, ""))

    # ------------------------------------------------------------------ listed tools
    @tool("Transfer the user to a human agent. The proper transfer reason enum can be found in the knowledge base: "
          "search it before calling this tool to select the proper applicable reason.", tool_kind=GENERIC,
          optional=("reason",), summary=described(STRING, "A summary of the user's issue and what was attempted before transfer."),
          reason={**described(STRING, "The specific reason code for the transfer."), "enum": list(TRANSFER_REASONS)})
    def transfer_to_human_agents(self, summary: str, reason: str = "other") -> str:
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @tool("Get the current time. Use this to get the current timestamp for logging verification records.")
    def get_current_time(self) -> str:
        return "The current time is 2025-11-14 03:40:00 EST."

    @tool("Get the information (date of birth, email, phone number, address) for a user by their user id.", user_id=_USER_ID)
    def get_user_information_by_id(self, user_id: str) -> str:
        return R.query_field(self.db, "users", "user_id", user_id)

    @tool("Get the information (date of birth, email, phone number, address) for a user by their name. Case Sensitive.",
          customer_name=described(STRING, "The name of the user"))
    def get_user_information_by_name(self, customer_name: str) -> str:
        return R.query_field(self.db, "users", "name", customer_name)

    @tool("Get the information (date of birth, email, phone number, address) for a user by their email.",
          email=described(STRING, "The email of the user"))
    def get_user_information_by_email(self, email: str) -> str:
        return R.query_field(self.db, "users", "email", email)

    @tool("Change the email address for a user.", tool_kind=WRITE, user_id=_USER_ID,
          new_email=described(STRING, "The new email address to set for the user"))
    def change_user_email(self, user_id: str, new_email: str) -> str:
        if not R.update(self.db, "users", user_id, {"email": new_email}):
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @tool("Get all referrals made by a user.", user_id=_USER_ID)
    def get_referrals_by_user(self, user_id: str) -> str:
        return R.query_field(self.db, "referrals", "referrer_id", user_id)

    @tool("Get all credit card transactions for a user.", user_id=_USER_ID)
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        return R.query_field(self.db, "credit_card_transaction_history", "user_id", user_id)

    @tool("Get all credit card accounts for a user: card type, date opened, current balance and reward points.",
          user_id=_USER_ID)
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        return R.query_field(self.db, "credit_card_accounts", "user_id", user_id)

    @tool("Log a verification record after verifying a user's identity by 2 of 4 fields (date of birth, email, phone "
          "number, address).", tool_kind=WRITE, name=described(STRING, "The verified user's full name"), user_id=_USER_ID,
          address=described(STRING, "The verified user's address"), email=described(STRING, "The verified user's email"),
          phone_number=described(STRING, "The verified user's phone number"),
          date_of_birth=described(STRING, "The verified user's date of birth (MM/DD/YYYY format)"),
          time_verified=described(STRING, 'The timestamp of the verification (e.g., "2025-11-14 03:40:00 EST")'))
    def log_verification(self, name: str, user_id: str, address: str, email: str, phone_number: str, date_of_birth: str,
                         time_verified: str) -> str:
        record = {"name": name, "user_id": user_id, "address": address, "email": email, "phone_number": phone_number,
                  "date_of_birth": date_of_birth, "time_verified": time_verified}
        if not R.add(self.db, "verification_history", ids.verification_id(user_id, time_verified), record):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"

    @tool("Pass a tool to the user so they can execute it themselves, when the knowledge base says the user should "
          "perform an action.", tool_kind=GENERIC, optional=("arguments",),
          discoverable_tool_name=described(STRING, "The name of the discoverable tool"),
          arguments=described(STRING, "JSON string of arguments for the tool (e.g., '{\"url\": \"https://example.com\"}')"))
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        from agentgym_suite.envs.tau2.banking.user_tools import BankingUserTools

        method = discoverable_methods(BankingUserTools).get(discoverable_tool_name)
        if method is None:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            given = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        accepted = method.__code__.co_varnames[: method.__code__.co_argcount]
        for name in given:
            if name not in accepted and name != "self":
                return f"Error: Unexpected parameter: {name}"
        info = self._describe(discoverable_tool_name, method)
        R.add(self.db, "user_discoverable_tools", ids.user_tool_id(discoverable_tool_name),
              {"tool_name": discoverable_tool_name, "status": "GIVEN"})
        shown = json.dumps(given, indent=2) if given else "(no arguments)"
        return (f"Tool given to user: {discoverable_tool_name}\nDescription: {info['description']}\nArguments: {shown}\n\n"
                f"The user can now execute this action by calling `call_discoverable_user_tool` with "
                f"discoverable_tool_name='{discoverable_tool_name}' and the same arguments.")

    @tool("Unlock an agent discoverable tool found in the knowledge base; then call it with `call_discoverable_agent_tool`.",
          tool_kind=GENERIC, agent_tool_name=described(STRING, "The name of the agent discoverable tool to unlock"))
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        method = discoverable_methods(type(self)).get(agent_tool_name)
        if method is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = self._describe(agent_tool_name, method)
        self.unlocked[agent_tool_name] = info
        return (f"Tool unlocked: {agent_tool_name}\nDescription: {info['description']}\n\n{for_agent(info)}\n\n"
                f"You can now use this tool by calling `call_discoverable_agent_tool` with "
                f"agent_tool_name='{agent_tool_name}' and the required arguments.")

    @tool("Call an agent discoverable tool that you have previously unlocked.", tool_kind=WRITE, optional=("arguments",),
          agent_tool_name=described(STRING, "The name of the agent discoverable tool to call"),
          arguments=described(STRING, "JSON string of arguments for the tool (e.g., '{\"user_id\": \"abc123\"}')"))
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> Any:
        method = discoverable_methods(type(self)).get(agent_tool_name)
        if method is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.unlocked:
            return (f"Error: Tool '{agent_tool_name}' has not been unlocked. You must first use "
                    "`unlock_discoverable_agent_tool` to unlock this tool before calling it.")
        try:  # numbers become floats, as upstream: 33 and 33.0 must make the same ids and records
            given = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        try:
            result = getattr(self, agent_tool_name)(**given)
        except TypeError as exc:
            return f"Error: Invalid arguments: {exc}"
        if method.__discoverable__ == WRITE or agent_tool_name in self.read_log:
            R.add(self.db, "agent_discoverable_tools", ids.agent_tool_id(agent_tool_name),
                  {"tool_name": agent_tool_name, "status": "CALLED"})
        return result

    @tool("List all agent discoverable tools that you have called.")
    def list_discoverable_agent_tools(self) -> str:
        found = R.query_text(self.db, "agent_discoverable_tools", "{}")
        if "No results found" in found:
            return "No agent tools have been called yet. Search the knowledge base to discover available tools."
        return f"Your called agent tools:\n{found}"

    # ------------------------------------------------------------------ knowledge retrieval
    @tool("Search the knowledge base for relevant documents.", query=described(STRING, "The search query to find relevant documents"))
    def KB_search(self, query: str) -> str:  # noqa: N802 (upstream's tool name)
        assert self.retrieval is not None
        return self.retrieval.search("kb", query)

    @tool("Search for a regex pattern in all knowledge base documents; documents ranked by number of matches, with full content.",
          pattern=described(STRING, "The regex pattern to search for (e.g., 'credit.*card', 'fee|charge')"))
    def grep(self, pattern: str) -> str:
        assert self.retrieval is not None
        return self.retrieval.grep(pattern)

    @tool("Search the knowledge base using BM25 sparse retrieval.", optional=("k",),
          query=described(STRING, "The search query to find relevant documents."),
          k=described(INTEGER, "Maximum number of documents to return (default 10)."))
    def KB_search_bm25(self, query: str, k: int = 10) -> str:  # noqa: N802 (upstream's tool name)
        assert self.retrieval is not None
        return self.retrieval.search("bm25", query, k)

    @tool("Search the knowledge base using dense embedding retrieval.", optional=("k",),
          query=described(STRING, "The search query to find relevant documents."),
          k=described(INTEGER, "Maximum number of documents to return (default 10)."))
    def KB_search_dense(self, query: str, k: int = 10) -> str:  # noqa: N802 (upstream's tool name)
        assert self.retrieval is not None
        return self.retrieval.search("dense", query, k)


__all__ = ["READ", "BankingTools"]

"""Keeping the telecom customer's phone consistent with their account.

The phone (user side) cannot see the carrier's database, yet what it can do depends on it:
a suspended line has no service, roaming works abroad only when the line allows it, data
stops once the cycle's allowance (plus refuelled GB) is used up, and a payment request the
agent sends shows up on the phone. :func:`sync` copies those facts into the phone's
``surroundings`` and settles paid requests back into the bills; both toolkits run it after
every call (tool, initialisation step or assertion) once :func:`pair` has linked them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from agentgym_suite.envs.tau2.toolkit import DomainTools

if TYPE_CHECKING:
    from agentgym_suite.envs.tau2.telecom import TelecomTools
    from agentgym_suite.envs.tau2.telecom_device import TelecomUserTools


class SyncedTools(DomainTools):
    """A toolkit that runs ``on_change`` after each call, whether it succeeded or was refused."""

    def __init__(self, db: dict[str, Any]) -> None:
        super().__init__(db)
        self.on_change: Callable[[], None] | None = None
        self.sync_paused = False
        """True while calls must not re-synchronise (the gold replay: upstream runs gold actions without syncing)."""

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            return super().call(name, arguments)
        finally:
            self._changed()

    def handlers(self) -> dict[str, Callable[..., Any]]:
        return {name: self._then_sync(name, handler) for name, handler in super().handlers().items()}

    def _then_sync(self, name: str, handler: Callable[..., Any]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            try:
                return handler(**kwargs)
            finally:
                self._changed()

        run.__name__ = name
        run.__doc__ = handler.__doc__
        run.__wrapped__ = handler  # type: ignore[attr-defined]
        return run

    def _changed(self) -> None:
        if self.on_change is not None and not self.sync_paused:
            self.on_change()


def pair(agent: TelecomTools, device: TelecomUserTools) -> None:
    """Link the two toolkits of one episode and synchronise them now."""

    def run() -> None:
        sync(agent, device)

    agent.on_change = device.on_change = run
    run()


def sync(agent: TelecomTools, device: TelecomUserTools) -> None:
    """Copy the account's state into the phone's surroundings; settle a paid payment request.

    Does nothing until the phone knows its owner's number (``set_user_info``).
    """
    around = device.surroundings
    number = around.get("phone_number")
    if not number:
        return
    line = agent.line_by_phone(number)
    around["line_active"] = line["status"] == "Active"
    around["roaming_allowed"] = bool(line["roaming_enabled"])
    allowance = agent.plan(line["plan_id"])["data_limit_gb"] + line["data_refueling_gb"]
    around["mobile_data_usage_exceeded"] = line["data_used_gb"] >= allowance
    request = around.get("payment_request")
    if request is not None and request.get("paid"):
        agent.set_bill_paid(request["bill_id"])
        around["payment_request"] = request = None
    if request is None:
        waiting = agent.bills_awaiting_payment(agent.get_customer_by_phone(number))
        if waiting:
            around["payment_request"] = {"bill_id": waiting[0]["bill_id"], "amount_due": waiting[0]["total_due"], "paid": False}

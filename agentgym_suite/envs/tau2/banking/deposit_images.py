"""What the ATM-deposit image lookup shows: the scans upstream holds for three test deposits, else "not available"."""

from __future__ import annotations

from typing import Any

_DISCREPANCY_NOTE = ("Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. "
                     "Discrepancy of $750.00 confirmed via image review.")


def _rent_refund_scan(envelope: str, time: str, location: str, check_number: str, bank: str, payee: str,
                      check_date: str) -> str:
    return f"""
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: {envelope}
Deposit Time: {time}
ATM Location: {location}

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: {check_number}
  - Drawn On: {bank}
  - Payee: {payee}
  - Amount: $875.00
  - Memo: "October rent refund"
  - Signature: Present and legible
  - Date on Check: {check_date}

Item 2: Cash
  - Denomination breakdown:
    * 2 x $100 bills = $200.00
    * 3 x $20 bills = $60.00
  - Total Cash: $260.00

--- DEPOSIT SUMMARY ---
Check Total: $875.00
Cash Total: $260.00
GRAND TOTAL: $1,135.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $385.00
DISCREPANCY DETECTED: $750.00 difference

--- IMAGE QUALITY ---
Envelope scan: CLEAR
Check front: CLEAR
Check back (endorsement): CLEAR - endorsed "For Deposit Only - {payee}"
Cash image: CLEAR - bills visible and countable
"""


_PARTIAL_SCAN = """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: ENV-2025-5847-00293
Deposit Time: 10:15 AM EST

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: 7392
  - Amount: $500.00

--- DEPOSIT SUMMARY ---
Check Total: $500.00
Cash Total: $0.00
GRAND TOTAL: $500.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $500.00
No discrepancy detected.
"""

SCANS: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": ("ATM #3921", _rent_refund_scan(
        "ENV-2025-3921-00923", "3:47 PM CST", "Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX", "7284",
        "First Texas Bank", "Derek Yamamoto", "11/03/2025"), _DISCREPANCY_NOTE),
    "btxn_test_deposit_001": ("ATM #3921", _rent_refund_scan(
        "ENV-2025-3921-00847", "2:34 PM EST", "Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR", "4821",
        "First National Bank", "Linda Patterson", "11/05/2025"), _DISCREPANCY_NOTE),
    "btxn_test_atm_dep_partial": ("ATM #5847", _PARTIAL_SCAN,
                                  "Images confirm deposit matches recorded amount. No discrepancy found."),
}
"""Transaction id -> (ATM, envelope scan text, verification notes)."""


def deposit_images_text(transaction_id: str, txn: dict[str, Any]) -> str:
    """The image lookup's answer for a Rho-Bank ATM deposit."""
    date = txn.get("date", "Unknown")
    head = f"ATM Deposit Image Retrieval Results\n=====================================\nTransaction ID: {transaction_id}\n"
    if transaction_id in SCANS:
        atm, scan, notes = SCANS[transaction_id]
        return f"{head}ATM: {atm}\nDeposit Date: {date}\n\n{scan}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
    return (f"{head}ATM: {txn.get('description', '')}\nDeposit Date: {date}\nAmount Recorded: "
            f"${abs(txn.get('amount', 0)):.2f}\n\n--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\nReason: Deposit "
            "images for this transaction have either expired (older than 90 days) or were not captured by the ATM "
            "system.\n\nFor deposits without available images, the dispute will proceed based on customer statement and "
            "ATM journal records only. Investigation timeline may be extended.\n")

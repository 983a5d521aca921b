"""Saying where a user sees it that a Tau2-v0 run is not a τ²-bench leaderboard run.

``gym.make("Tau2-v0")`` with no user configured plays the scripted offline test double, whose
opening message is the customer's private scenario: its numbers are not τ² numbers. The env
puts ``comparable_to_leaderboard`` and ``leaderboard_departures`` in every ``info`` (eval copies
the same into ``summary.json``), and :func:`warn_once` logs the reasons on the first reset of
each distinct setting in a process (a warning on the suite's logger: shown on stderr by the
CLI and by Python's last-resort handler, captured by pytest).
"""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger(__name__)

_warned: set[tuple[str, ...]] = set()
_lock = threading.Lock()


def warn_once(env_id: str, departures: list[str]) -> bool:
    """Log that ``env_id``'s scores are not leaderboard scores, once per distinct list of reasons;
    True when this call logged."""
    if not departures:
        return False
    key = (env_id, *departures)
    with _lock:
        if key in _warned:
            return False
        _warned.add(key)
    logger.warning("%s: these scores are not comparable to the τ²-bench leaderboard: %s. summary.json says "
                   "comparable_to_leaderboard: false.", env_id, "; ".join(departures))
    return True

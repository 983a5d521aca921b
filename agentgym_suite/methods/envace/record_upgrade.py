"""EnvACE's trajectory records of the earlier layout, read back with their world-model generations.

Before the generic ``role_generations`` record existed, a rehearsal episode's turn kept the world
model's generations under its own key, ``simulator_generations``: flat
:meth:`~agentgym_suite.methods.envace.generation.SimulatorGeneration.to_dict` dicts. The loader
does not know that key and would drop it; :func:`upgrade_record`, declared in this package's
``ENTRY_POINTS`` (group ``agentgym_suite.record_upgrades``), moves each such generation into the
turn's ``role_generations`` as the generic record the rehearsal env reports today
(:meth:`~agentgym_suite.methods.envace.generation.SimulatorGeneration.as_role_generation`), after
any the turn already holds, so nothing is lost and the trainer and the viewer read it as a new file's.
"""

from __future__ import annotations

from typing import Any

from agentgym_suite.core.role_generation import ROLE_GENERATIONS
from agentgym_suite.methods.envace.generation import SimulatorGeneration

LEGACY_KEY = "simulator_generations"
"""The turn key of the earlier layout."""


def upgrade_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with each turn's ``simulator_generations`` moved into its ``role_generations``
    (records without the key come back unchanged).

    Raises:
        ValueError: a turn's ``simulator_generations`` is not a list of generation dicts.
    """
    turns = record.get("turns")
    if not isinstance(turns, list) or not any(isinstance(t, dict) and LEGACY_KEY in t for t in turns):
        return record
    record = dict(record)
    record["turns"] = [_upgraded_turn(turn) if isinstance(turn, dict) and LEGACY_KEY in turn else turn
                       for turn in turns]
    return record


def _upgraded_turn(turn: dict[str, Any]) -> dict[str, Any]:
    turn = dict(turn)
    legacy = turn.pop(LEGACY_KEY) or []
    if not isinstance(legacy, list):
        raise ValueError(f"a turn's {LEGACY_KEY!r} must be a list of generation dicts, got {type(legacy).__name__}.")
    upgraded = [SimulatorGeneration.from_dict(item).as_role_generation().to_dict() for item in legacy]
    turn[ROLE_GENERATIONS] = [*(turn.get(ROLE_GENERATIONS) or []), *upgraded]
    return turn


__all__ = ["LEGACY_KEY", "upgrade_record"]

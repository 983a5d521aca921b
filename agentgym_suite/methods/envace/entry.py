"""EnvACE-Rehearsal-v0's registration entry, declared by this package in its ``ENTRY_POINTS``
(group ``agentgym_suite.envs``), as an installed distribution declares its envs.

Kept apart from :mod:`.env` so reading the entry imports no more than the registration table:
``gym.make`` and ``agentgym list`` stay light; the env class loads when the env is made.
"""

from __future__ import annotations

from agentgym_suite.registration import EnvEntry

ENTRY = EnvEntry(
    "EnvACE-Rehearsal-v0", "agentgym_suite.methods.envace.env:RehearsalEnv", 20,
    "a world model answers every tool call of a tool env (EnvACE rehearsal)",
    card="agentgym_suite.methods.envace.card:CARD", env_mode="rehearsal",
)
"""The ``EnvACE-Rehearsal-v0`` entry (:class:`~agentgym_suite.registration.EnvEntry`); its eval
flags and ``agentgym fidelity`` come through this package's ``agentgym_suite.eval`` entry point."""

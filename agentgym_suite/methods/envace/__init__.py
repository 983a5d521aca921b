"""EnvACE as one package: its credit plug-in, its rehearsal env and world model, its rehearsing
agent, its fidelity report and command, its eval flags and its old-record upgrade.

What lives here (each module one job):

* :mod:`.credit` - :class:`~agentgym_suite.methods.envace.credit.EnvACECredit` (``--credit envace``):
  role-wise GRPO over Caller and Simulator rows.
* :mod:`.env` (and :mod:`.contract`, :mod:`.prompts`, :mod:`.world_model`, :mod:`.grounding`,
  :mod:`.rewards`, :mod:`.released_calls`, :mod:`.scripted`, :mod:`.generation`, :mod:`.card`, :mod:`.entry`) -
  ``EnvACE-Rehearsal-v0``, described below.
* :mod:`.rehearsing_agent` and :mod:`.eval_extension` - test-time rehearsal, ``agentgym eval
  --rehearsal-*``; :mod:`.fidelity` and :mod:`.fidelity_command` - ``agentgym fidelity``.
* :mod:`.record_upgrade` - trajectory files of the earlier layout (a turn's
  ``simulator_generations``) read back as generic role generations.

The package sits on the ``methods`` floor, above the trainer and evaluation floors, so no generic
module imports it: it plugs into generic extension points. Its env entry (:mod:`.entry`), credit
plug-in, eval extension (the ``--rehearsal-*`` flags and ``agentgym fidelity``) and record upgrade
are entry points this package declares in :data:`ENTRY_POINTS`, under the groups an installed
distribution uses, read by :func:`agentgym_suite.core.plugins.declared` exactly as an installed
distribution's. Importing this package is cheap: the names below are loaded on first use.

``EnvACE-Rehearsal-v0``: world rehearsal - a model plays the environment of a tool env.

``gymnasium.make("EnvACE-Rehearsal-v0", base_env="BFCL-v0", base_env_kwargs={...},
world_model=...)`` wraps a tool env of the suite (BFCL, Tau2, VitaBench, FinMCP,
SyntheticTools; default SyntheticTools-v0). The base env supplies tasks, tools,
instructions, user turns, recorded examples and its success check; every tool call is
answered by the world model (the embedded ``default`` model when nothing is given, loaded on
the first call) - or, with ``world_model="real"``, by the base env's real tools.

Training scores each user turn against the task's checklists (``reward_mode="checklist"``,
:mod:`.checklist`; deterministic on SyntheticTools-v0, a fixed judge on ChecklistTools-v0);
the simulator is grounded on real executions of the base env's training split
(:mod:`.grounding`), sees every call that parses (it validates), and samples with the
``training`` or ``evaluation`` profile (:mod:`.world_model`; the latter decodes under the
output contract, :mod:`agentgym_suite.llm.structured`).

Simulator generations, for training the Simulator role
------------------------------------------------------
Each ``step`` reports the generations it made once, in ``info["role_generations"]``: generic
records of the role ``simulator`` (:mod:`agentgym_suite.core.role_generation`), in call order;
empty after ``reset`` and on steps without simulated calls. A trainer whose credit plug-in trains
that role (EnvACE) makes ``simulator`` rows from the trainable ones (``trainers/rows.py``).
``simulator_generations(info)`` (:mod:`.generation`) reads them back as
:class:`~agentgym_suite.methods.envace.generation.SimulatorGeneration` records, and the whole
episode's list is ``env.unwrapped.episode_generations``. Each records the simulated call (tool
name, arguments, call id, caller turn, position among the turn's calls), the simulator's prompt
(messages, rendered text, exact token ids), the generation (token ids, log-probs, text, finish
reason), whether it met the ``<execution_result>`` contract, and the result given to the caller.
"""

from __future__ import annotations

import importlib
from typing import Any

ENTRY_POINTS: dict[str, dict[str, str]] = {
    "agentgym_suite.envs": {"rehearsal": "agentgym_suite.methods.envace.entry:ENTRY"},
    "agentgym_suite.eval": {"rehearsal": "agentgym_suite.methods.envace.eval_extension:EXTENSION"},
    "agentgym_suite.credit": {"envace": "agentgym_suite.methods.envace.credit:EnvACECredit"},
    "agentgym_suite.record_upgrades": {"envace": "agentgym_suite.methods.envace.record_upgrade:upgrade_record"},
}
"""The entry points of this method package, by group, as a distribution's ``pyproject.toml`` would
declare them (:func:`agentgym_suite.core.plugins.suite_methods` reads them)."""

_EXPORTS: dict[str, str] = {
    "INVALID_SIMULATOR_OUTPUT": "contract",
    "SIMULATOR_FAILED": "contract",
    "format_execution_result": "contract",
    "parse_execution_result": "contract",
    "RehearsalEnv": "env",
    "SIMULATOR_SYSTEM_PROMPT": "prompts",
    "SimulatorRequest": "prompts",
    "build_simulator_messages": "prompts",
    "REWARD_MODES": "rewards",
    "REAL": "world_model",
    "WorldModel": "world_model",
    "EnvACECredit": "credit",
    "RehearsingAgent": "rehearsing_agent",
}
"""Public name -> the module of this package that defines it (loaded on first use)."""


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ENTRY_POINTS", *_EXPORTS]

"""``EnvACE-Rehearsal-v0``: world rehearsal - a model plays the environment of a tool env.

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
:class:`~agentgym_suite.envs.rehearsal.generation.SimulatorGeneration` records, and the whole
episode's list is ``env.unwrapped.episode_generations``. Each records the simulated call (tool
name, arguments, call id, caller turn, position among the turn's calls), the simulator's prompt
(messages, rendered text, exact token ids), the generation (token ids, log-probs, text, finish
reason), whether it met the ``<execution_result>`` contract, and the result given to the caller.
"""

from agentgym_suite.envs.rehearsal.contract import (
    INVALID_SIMULATOR_OUTPUT,
    SIMULATOR_FAILED,
    format_execution_result,
    parse_execution_result,
)
from agentgym_suite.envs.rehearsal.env import RehearsalEnv
from agentgym_suite.envs.rehearsal.prompts import SIMULATOR_SYSTEM_PROMPT, SimulatorRequest, build_simulator_messages
from agentgym_suite.envs.rehearsal.rewards import REWARD_MODES
from agentgym_suite.envs.rehearsal.world_model import REAL, WorldModel

__all__ = [
    "INVALID_SIMULATOR_OUTPUT",
    "REAL",
    "REWARD_MODES",
    "SIMULATOR_FAILED",
    "SIMULATOR_SYSTEM_PROMPT",
    "RehearsalEnv",
    "SimulatorRequest",
    "WorldModel",
    "build_simulator_messages",
    "format_execution_result",
    "parse_execution_result",
]

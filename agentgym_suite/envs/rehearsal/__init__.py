"""``EnvACE-Rehearsal-v0``: world rehearsal - a model plays the environment of a tool env.

``gymnasium.make("EnvACE-Rehearsal-v0", base_env="BFCL-v0", base_env_kwargs={...},
world_model=...)`` wraps a tool env of the suite (BFCL, Tau2, VitaBench, FinMCP,
SyntheticTools; default SyntheticTools-v0). The base env supplies tasks, tools,
instructions, user turns, recorded examples and its success check; every tool call is
answered by the world model (the embedded ``default`` model when nothing is given, loaded on
the first call) - or, with ``world_model="real"``, by the base env's real tools.

Simulator generations, for training the Simulator role
------------------------------------------------------
Each ``step`` puts the generations it made in ``info["simulator_generations"]`` (a list, in
call order; empty after ``reset`` and on steps without simulated calls). The whole episode's
list is ``env.unwrapped.episode_generations``. Each item is a dict:

``role``            ``"simulator"``
``tool_name``       the simulated tool; ``arguments`` its parsed arguments
``call_id``, ``turn``, ``index``   the call's id, the caller turn (1-based) and its position among the turn's calls
``prompt_messages`` the simulator's chat messages (system + user)
``prompt_text``     the prompt as the backend rendered it (chat template applied)
``prompt_ids``      the exact token ids the world model was conditioned on
``completion_ids``  the generated token ids; ``logprobs`` one log-prob per id
``completion_text`` the generated text (``decode(completion_ids)``)
``finish_reason``, ``has_token_ids``  as in :class:`~agentgym_suite.llm.base.Sample`
``contract_valid``  the text met the ``<execution_result>`` contract
``result``          the JSON result given to the caller (an ``error_tool_call`` payload when invalid)

:func:`~agentgym_suite.envs.rehearsal.rows.simulator_row_records` turns an episode's
generations into row records with ``role="simulator"`` carrying the episode return.
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
from agentgym_suite.envs.rehearsal.rows import simulator_row_records
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
    "simulator_row_records",
]

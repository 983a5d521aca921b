"""``Tau2-v0``: tau2-bench customer service (retail, airline, telecom, banking_knowledge, mock) over this suite's own domain tools."""

from agentgym_suite.envs.tau2.env import Tau2Env
from agentgym_suite.envs.tau2.evaluation import RewardBreakdown, evaluate
from agentgym_suite.envs.tau2.nl_judge import ModelNLJudge
from agentgym_suite.envs.tau2.scripted_user import ScriptedUser
from agentgym_suite.envs.tau2.users import LLMUser, UserContext, UserSimulator, UserSimulatorError

__all__ = ["LLMUser", "ModelNLJudge", "RewardBreakdown", "ScriptedUser", "Tau2Env", "UserContext", "UserSimulator",
           "UserSimulatorError", "evaluate"]

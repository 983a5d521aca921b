"""The contracts every part of the suite shares: the ``TextEnv`` base, text spaces, action
formats, the shared ``info`` keys, the test profile an env declares, data-directory resolution
and errors."""

from agentgym_suite.core.actions import ActionFormat, ParsedAction, get_action_format
from agentgym_suite.core.data import benchmark_dir, cache_dir, data_dir
from agentgym_suite.core.errors import (
    AgentGymError,
    BackendNotInstalledError,
    DataNotFoundError,
    NoNetworkError,
    UnknownTaskError,
)
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.info import INFO_KEYS, documented_keys
from agentgym_suite.core.spaces import NaturalText
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv

__all__ = [
    "ActionFormat",
    "AgentGymError",
    "BackendNotInstalledError",
    "DataNotFoundError",
    "FixtureProfile",
    "INFO_KEYS",
    "NaturalText",
    "NoNetworkError",
    "ParsedAction",
    "StepOutcome",
    "TaskStart",
    "TextEnv",
    "UnknownTaskError",
    "benchmark_dir",
    "cache_dir",
    "data_dir",
    "documented_keys",
    "get_action_format",
]

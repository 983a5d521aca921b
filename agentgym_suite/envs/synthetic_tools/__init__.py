"""``SyntheticTools-v0``: seeded procedural stateful tool worlds (the suite's synthetic env mode)."""

from agentgym_suite.envs.synthetic_tools.env import SyntheticToolsEnv, state_score
from agentgym_suite.envs.synthetic_tools.generator import Knobs, Task, World, generate_world

__all__ = ["Knobs", "SyntheticToolsEnv", "Task", "World", "generate_world", "state_score"]

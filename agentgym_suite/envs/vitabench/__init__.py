"""VitaBench-v0: life-service tasks (delivery, in-store) over each task's database, with a simulated user."""

from agentgym_suite.envs.vitabench.env import VitaBenchEnv

__all__ = ["VitaBenchEnv"]

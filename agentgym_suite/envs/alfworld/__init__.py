"""ALFWorld-v0: ALFWorld's household tasks on TextWorld's PDDL engine."""

from agentgym_suite.envs.alfworld.env import ALFWorldEnv

__all__ = ["ALFWorldEnv"]

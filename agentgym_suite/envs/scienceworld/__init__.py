"""ScienceWorld-v0: the ScienceWorld simulator (Java, one JVM per env) behind the text-env contract."""

from agentgym_suite.envs.scienceworld.env import ScienceWorldEnv

__all__ = ["ScienceWorldEnv"]

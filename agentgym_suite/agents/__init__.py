"""Agents that act in the suite's envs: the ``Agent`` protocol, random and oracle agents
(model-backed agents live beside them)."""

from agentgym_suite.agents.base import Agent, OracleAgent, RandomAgent

__all__ = ["Agent", "OracleAgent", "RandomAgent"]

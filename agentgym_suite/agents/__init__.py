"""Agents that act in the suite's envs.

* :class:`Agent` — the protocol: ``reset(env, seed=)`` then ``act(observation, info)``;
  :class:`BatchedAgent` — many envs at once: ``reset_batch``, ``act_batch``, ``keep_slots``.
* :class:`RandomAgent`, :class:`OracleAgent` — baselines every env supports.
* :class:`ModelAgent` — any generation backend (transformers, vLLM, an OpenAI-compatible
  endpoint) on command envs and tool envs alike.

A method's own agent lives in its method package (EnvACE's rehearsing agent:
``agentgym_suite.methods.envace.rehearsing_agent.RehearsingAgent``), a floor above this one.
"""

from agentgym_suite.agents.base import Agent, BatchedAgent, OracleAgent, RandomAgent
from agentgym_suite.agents.model_agent import ModelAgent

__all__ = ["Agent", "BatchedAgent", "ModelAgent", "OracleAgent", "RandomAgent"]

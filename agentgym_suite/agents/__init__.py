"""Agents that act in the suite's envs.

* :class:`Agent` — the protocol: ``reset(env, seed=)`` then ``act(observation, info)``;
  :class:`BatchedAgent` — many envs at once: ``reset_batch``, ``act_batch``, ``keep_slots``.
* :class:`RandomAgent`, :class:`OracleAgent` — baselines every env supports.
* :class:`ModelAgent` — any generation backend (transformers, vLLM, an OpenAI-compatible
  endpoint) on command envs and tool envs alike.
* :class:`RehearsingAgent` — test-time private rehearsal against a world model before
  acting once for real (EnvACE); it lives with the rehearsal env it imagines in
  (``agentgym_suite.envs.rehearsal.rehearsing_agent``) and is re-exported here.
"""

from agentgym_suite.agents.base import Agent, BatchedAgent, OracleAgent, RandomAgent
from agentgym_suite.agents.model_agent import ModelAgent
from agentgym_suite.envs.rehearsal.rehearsing_agent import RehearsingAgent

__all__ = ["Agent", "BatchedAgent", "ModelAgent", "OracleAgent", "RandomAgent", "RehearsingAgent"]

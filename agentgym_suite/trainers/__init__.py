"""Training: the multi-turn GRPO trainer built on TRL and its credit-assignment plug-ins
(``agentgym_suite.trainers.credit``).

``AgentGRPOConfig`` and ``AgentGRPOTrainer`` are imported lazily so that importing the
credit plug-ins does not pull in TRL's trainer stack.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AgentGRPOConfig", "AgentGRPOTrainer"]


def __getattr__(name: str) -> Any:
    if name == "AgentGRPOConfig":
        from agentgym_suite.trainers.config import AgentGRPOConfig

        return AgentGRPOConfig
    if name == "AgentGRPOTrainer":
        from agentgym_suite.trainers.agent_grpo import AgentGRPOTrainer

        return AgentGRPOTrainer
    raise AttributeError(f"module 'agentgym_suite.trainers' has no attribute {name!r}")

"""Envs that borrow the policy being trained.

An env can ask a trainer for its policy (a world model that answers an agent's tool calls with
it, say). The env declares the constructor argument that takes it (``TextEnv.policy_setting``); a
trainer sets that argument to :data:`POLICY` unless the caller gave another value, hands the
policy's current backend to :meth:`~agentgym_suite.core.text_env.TextEnv.lend_policy` before
every rollout, and keeps such envs in its own process (the backend cannot travel to a worker).
"""

from __future__ import annotations

from typing import Any

POLICY = "policy"
"""The value of an env's policy setting that asks the trainer for the policy being trained."""


def asks_for_policy(value: Any) -> bool:
    """True when a policy setting's value asks for the trainer's policy (unset counts as asking)."""
    return value is None or (isinstance(value, str) and value == POLICY)


__all__ = ["POLICY", "asks_for_policy"]

"""What a training run resolves from its configuration, once: the run context.

``AgentGRPOConfig`` holds settings only (names and text, as YAML and flags give them). What those
settings resolve to, the plug-in class ``credit`` names and the parsed ``env_workers``, is
computed here, once per distinct setting in a process, and shared by whoever asks: the config's
own validation (so a bad name or value fails when the config is built), the trainer and its env
pool. The config never stores these objects, so changing ``credit`` or ``env_workers`` on a config
simply resolves the new values on the next :func:`run_context` call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentgym_suite.registration import env_class, training_env_modes
from agentgym_suite.rollout.workers import EnvWorkers, parse_env_workers

if TYPE_CHECKING:
    from agentgym_suite.trainers.credit import CreditAssigner


@dataclass(frozen=True)
class RunContext:
    """The resolved settings of one training run."""

    credit_class: type[CreditAssigner]
    """The plug-in class ``credit`` names (a registry name, an installed plug-in's name, or an import path)."""
    env_workers: EnvWorkers | None
    """``env_workers`` parsed: the value the env pool takes (None: the env's default)."""
    train_env_id: str
    """The env id rollouts run on, after ``env_mode`` (declared by the registration entries)."""

    @property
    def env_workers_text(self) -> str | None:
        """The canonical text of :attr:`env_workers` (what the config keeps); None when unset."""
        return None if self.env_workers is None else str(self.env_workers)


_CONTEXTS: dict[str, RunContext] = {}
"""Resolved contexts by the settings they were resolved from (raw and canonical)."""


def _key(credit: str, env_workers: Any, env_mode: str, env_id: str, env_kwargs: Any) -> str:
    return json.dumps([credit, str(env_workers), env_mode, env_id, env_kwargs], sort_keys=True, default=repr)


def run_context(config: Any) -> RunContext:
    """The :class:`RunContext` of ``config`` (an ``AgentGRPOConfig``), resolved the first time these
    settings are seen in this process and reused after.

    Raises:
        ValueError: an unknown plug-in name or broken import path, a bad ``env_workers`` value, or
            worker processes for an env that borrows the policy being trained.
    """
    env_kwargs = dict(config.env_kwargs or {})
    key = _key(config.credit, config.env_workers, config.env_mode, config.env_id, env_kwargs)
    if key not in _CONTEXTS:
        context = _resolve(config.credit, config.env_workers, config.env_mode, config.env_id, env_kwargs)
        _CONTEXTS[key] = context
        _CONTEXTS[_key(config.credit, context.env_workers_text, config.env_mode, config.env_id, env_kwargs)] = context
    return _CONTEXTS[key]


def _resolve(credit: str, env_workers: Any, env_mode: str, env_id: str, env_kwargs: dict[str, Any]) -> RunContext:
    """The one lookup of the plug-in by name and the one parse of ``env_workers`` for these settings."""
    from agentgym_suite.trainers.credit import credit_assigner_class

    workers = parse_env_workers(env_workers)
    train_env_id = training_env_modes().get(env_mode, env_id)
    if workers is not None and workers.kind != "inline":
        _refuse_workers_for_a_borrowing_env(train_env_id, str(workers), env_kwargs)
    return RunContext(credit_assigner_class(credit), workers, train_env_id)


def _refuse_workers_for_a_borrowing_env(train_env_id: str, workers: str, env_kwargs: dict[str, Any]) -> None:
    """Refuse worker processes for an env that borrows the policy being trained (its class's
    ``borrows_policy``): that env must live in the training process."""
    cls = env_class(train_env_id)
    borrows = getattr(cls, "borrows_policy", None)
    if callable(borrows) and borrows(env_kwargs):
        setting = cls.policy_setting
        raise ValueError(
            f"env_workers={workers!r}: {train_env_id} borrows the policy being trained ({setting}), "
            "which lives in the training process, so its envs must too. Set env_workers: 1, or give the env a "
            f"model of its own in env_kwargs ({setting}: <backend spec>)."
        )

"""Envs that borrow the policy, for :class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer`.

A mixin of the trainer (one of its bases), kept in a file of its own so ``agent_grpo.py`` reads as
the four phases. An env made to borrow the policy being trained asks for it through its declared
hook (``TextEnv.policy_setting``, ``wants_policy``; :mod:`~agentgym_suite.core.policy_loan`); before
every rollout the trainer lends it its generation backend (:meth:`PolicyLoan._lend_policy`). The
generations the policy makes inside such an env are reported as role generations
(:mod:`~agentgym_suite.core.role_generation`); those of a role the credit plug-in lists in its
``roles`` are trained as rows of that role (:meth:`PolicyLoan._generation_roles`; e.g. the rows of
a world model, the policy playing the environment of a tool env).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from agentgym_suite.rollout.records import Trajectory
from agentgym_suite.trainers.distributed import world_model_lockstep_check

logger = logging.getLogger("agentgym_suite.trainers.agent_grpo")  # the trainer's logger, as before the move


class PolicyLoan:
    """Mixin of ``AgentGRPOTrainer``: lends the policy to envs that ask for it (module docstring)."""

    _policy_borrowers: set[int]
    _untrained_roles_warned: set[str]
    credit: Any
    sync: Any
    use_vllm: bool
    _dist: Any

    def _generation_roles(self, trajectories: Sequence[Trajectory]) -> tuple[str, ...]:
        """The roles whose generations inside the envs become rows: the plug-in's ``roles``, once an env
        borrowed the policy (only then are the generations the policy's own); none otherwise. Warns
        once per role about generations of a role the plug-in does not train."""
        if not self._policy_borrowers:
            return ()
        made = {g.role for t in trajectories for turn in t.turns for g in turn.role_generations}
        for role in sorted(made - set(self.credit.roles) - self._untrained_roles_warned):
            logger.warning("the policy generates as %r inside the env, but credit=%s does not train that role (its roles: "
                           "%s); use a plug-in whose roles include it to train those generations too.", role,
                           self.credit.name, ", ".join(self.credit.roles))
            self._untrained_roles_warned.add(role)
        return tuple(self.credit.roles)

    def _lend_policy(self, envs: list[gym.Env], backend: Any) -> None:
        """Envs that asked for the policy (``wants_policy``) get the policy's backend (``lend_policy``).

        The backend wraps the weights being trained (the same object the agent samples from), so the
        env's borrowed role is played by the current policy. It is lent again before every rollout
        because the backend object is rebuilt each time (under ZeRO-3 the gathered weights differ).
        """
        for env in envs:
            if not isinstance(env, gym.Env):  # an env in a worker never borrows the policy
                continue
            inner = env.unwrapped
            wants = getattr(inner, "wants_policy", None)  # the env's declared hook (TextEnv.policy_setting)
            if id(inner) not in self._policy_borrowers and not (callable(wants) and wants()):
                continue
            world_model_lockstep_check(self.sync, backend, self.use_vllm, self._dist)
            inner.lend_policy(backend)
            self._policy_borrowers.add(id(inner))

"""The policy as a rehearsal env's world model, for :class:`~agentgym_suite.trainers.agent_grpo.AgentGRPOTrainer`.

A mixin of the trainer (one of its bases), kept in a file of its own so ``agent_grpo.py`` reads as
the four phases. Rehearsal envs (``EnvACE-Rehearsal-v0``) made with ``world_model: policy`` ask for
the policy through their declared hook (``wants_policy``); before every rollout the trainer lends
them its generation backend (:meth:`PolicyWorldModel._attach_world_model`), and with a plug-in
whose ``roles`` include ``simulator`` the world model's generations are trained as ``simulator``
rows (:attr:`PolicyWorldModel.trains_simulator`).
"""

from __future__ import annotations

import logging
from typing import Any

import gymnasium as gym

from agentgym_suite.trainers.distributed import world_model_lockstep_check

logger = logging.getLogger("agentgym_suite.trainers.agent_grpo")  # the trainer's logger, as before the move

SIMULATOR_ROLE = "simulator"
"""Role of the rows built from a rehearsal env's world-model generations; a plug-in whose ``roles``
include it trains them."""


class PolicyWorldModel:
    """Mixin of ``AgentGRPOTrainer``: lends the policy to rehearsal envs as their world model."""

    _policy_world: set[int]
    credit: Any
    sync: Any
    use_vllm: bool
    _dist: Any

    @property
    def trains_simulator(self) -> bool:
        """True when simulator generations of the policy become ``simulator`` rows (EnvACE).

        That needs a rehearsal env whose world model is the policy and a plug-in whose ``roles``
        include ``simulator`` (``envace``); with another plug-in the policy still answers the tool
        calls, but its simulator generations are not trained on.
        """
        return bool(self._policy_world) and SIMULATOR_ROLE in self.credit.roles

    def _attach_world_model(self, envs: list[gym.Env], backend: Any) -> None:
        """Rehearsal envs made with ``world_model: policy`` get the policy's backend as world model.

        The backend wraps the weights being trained (the same object the Caller samples from), so
        the Simulator role is played by the current policy. It is set again before every rollout
        because the backend object is rebuilt each time (under ZeRO-3 the gathered weights differ).
        """
        for env in envs:
            if not isinstance(env, gym.Env):  # an env in a worker never has the policy as world model
                continue
            inner = env.unwrapped
            wants = getattr(inner, "wants_policy", None)  # the env's declared hook (TextEnv.policy_setting)
            if id(inner) not in self._policy_world and not (callable(wants) and wants()):
                continue
            world_model_lockstep_check(self.sync, backend, self.use_vllm, self._dist)
            inner.lend_policy(backend)
            if not self._policy_world and SIMULATOR_ROLE not in self.credit.roles:
                logger.warning("the policy answers %s's calls, but credit=%s does not train the %s role; use a plug-in "
                               "whose roles include it to train both roles.", type(inner).__name__, self.credit.name,
                               SIMULATOR_ROLE)
            self._policy_world.add(id(inner))

"""agentgym-suite: LLM-agent benchmarks, synthetic tool worlds and a learned rehearsal world
model behind one Gymnasium text-env contract.

Importing the package registers every env id with Gymnasium::

    import gymnasium as gym
    import agentgym_suite  # noqa: F401
    env = gym.make("TextWorld-v0")
"""

from __future__ import annotations

from agentgym_suite.registration import ENV_ENTRIES, register_all
from agentgym_suite.vector import make_vec

__version__ = "0.1.0"

register_all()

__all__ = ["ENV_ENTRIES", "__version__", "make_vec", "register_all"]

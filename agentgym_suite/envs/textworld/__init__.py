"""TextWorld-v0: games generated offline with TextWorld's own generator, played by its engine.

``base`` holds what TextWorld-v0 and ALFWorld-v0 share (both run on TextWorld's engine).
"""

from agentgym_suite.envs.textworld.env import TextWorldEnv

__all__ = ["TextWorldEnv"]

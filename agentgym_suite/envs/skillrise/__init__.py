"""SkillRise trials: K related tasks of a base env solved in a row, with a skill document
curated between them (Solve and Curate turns), as one env episode.

``SkillRiseTrial(base_env, family_of=..., k=3)`` wraps any suite text env; the ``skillrise``
credit plug-in builds these trials around the env a trainer trains on. ``SkillRise-v0``
(:class:`SkillRiseEnv`) makes the same trials from a base env id, for evaluation.
"""

from agentgym_suite.envs.skillrise.env import SkillRiseTrial
from agentgym_suite.envs.skillrise.projection import parse_skill
from agentgym_suite.envs.skillrise.trial_env import SkillRiseEnv, trial_turn_limit

__all__ = ["SkillRiseEnv", "SkillRiseTrial", "parse_skill", "trial_turn_limit"]

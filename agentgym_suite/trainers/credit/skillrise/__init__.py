"""SkillRise credit, one package: the plug-in with its row roles (Solve, Curate) and metrics
(:mod:`.plugin`) and its declared input, each row's task position in its trial (:mod:`.inputs`).
The trial env it plays lives with the benchmark, in ``agentgym_suite.envs.skillrise``.

``agentgym_suite.trainers.credit.skillrise`` re-exports both modules' public names, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.skillrise.inputs import POSITIONS, positions_of, trial_positions
from agentgym_suite.trainers.credit.skillrise.plugin import (
    CURATE,
    PAPER_ENV_SETTINGS,
    SOLVE,
    SkillRiseCredit,
    SkillRiseCreditConfig,
    first_row_baseline,
    skillrise_scores,
)

__all__ = [
    "CURATE",
    "PAPER_ENV_SETTINGS",
    "POSITIONS",
    "SOLVE",
    "SkillRiseCredit",
    "SkillRiseCreditConfig",
    "first_row_baseline",
    "positions_of",
    "skillrise_scores",
    "trial_positions",
]

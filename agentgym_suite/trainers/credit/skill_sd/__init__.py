"""Skill-SD, one package: GRPO plus an importance-weighted k3 distillation term (:mod:`.plugin`);
its teacher context is the self-distillation plug-ins' shared one
(:mod:`agentgym_suite.trainers.credit.self_distillation`).

``agentgym_suite.trainers.credit.skill_sd`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.skill_sd.plugin import (
    K3_CAP,
    RATIO_CAP,
    skill_sd_terms,
    SkillSDCredit,
    SkillSDCreditConfig,
)

__all__ = [
    "K3_CAP",
    "RATIO_CAP",
    "SkillSDCredit",
    "SkillSDCreditConfig",
    "skill_sd_terms",
]

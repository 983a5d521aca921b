"""AgentOPSD, one package: recursive belief credit from the teacher's evidence (:mod:`.plugin`);
its teacher context is the self-distillation plug-ins' shared one
(:mod:`agentgym_suite.trainers.credit.self_distillation`).

``agentgym_suite.trainers.credit.agentopsd`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.agentopsd.plugin import (
    AgentOPSDCredit,
    AgentOPSDCreditConfig,
    BELIEF_CLAMP,
    belief_revisions,
    multipliers,
    PRIOR_CLAMP,
)

__all__ = [
    "AgentOPSDCredit",
    "AgentOPSDCreditConfig",
    "BELIEF_CLAMP",
    "PRIOR_CLAMP",
    "belief_revisions",
    "multipliers",
]

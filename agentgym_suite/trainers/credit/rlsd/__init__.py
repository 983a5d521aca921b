"""RLSD, one package: GRPO advantages reweighted per token by the clipped teacher/student ratio
(:mod:`.plugin`); its teacher context is the self-distillation plug-ins' shared one
(:mod:`agentgym_suite.trainers.credit.self_distillation`).

``agentgym_suite.trainers.credit.rlsd`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.rlsd.plugin import (
    decayed_lambda,
    RLSDCredit,
    RLSDCreditConfig,
)

__all__ = [
    "RLSDCredit",
    "RLSDCreditConfig",
    "decayed_lambda",
]

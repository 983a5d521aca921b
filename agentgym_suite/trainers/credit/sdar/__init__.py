"""SDAR and OPSD, one package: the gated self-distillation loss on top of GRPO (``sdar``) and
the same loss trained alone (``opsd``), in :mod:`.plugin`; their teacher context is the
self-distillation plug-ins' shared one (:mod:`agentgym_suite.trainers.credit.self_distillation`).

``agentgym_suite.trainers.credit.sdar`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.sdar.plugin import (
    OPSDCredit,
    OPSDCreditConfig,
    sdar_loss,
    SDARCredit,
    SDARCreditConfig,
)

__all__ = [
    "OPSDCredit",
    "OPSDCreditConfig",
    "SDARCredit",
    "SDARCreditConfig",
    "sdar_loss",
]

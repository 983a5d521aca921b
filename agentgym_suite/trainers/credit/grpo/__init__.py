"""GRPO and Dr. GRPO, one package: verl-agent's group-relative advantages over all step rows of a
group (``grpo``) and the unnormalised variant (``dr_grpo``), in :mod:`.plugin`. Its row advantages
(``grpo_row_advantages``) are the base the self-distillation plug-ins build on.

``agentgym_suite.trainers.credit.grpo`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.grpo.plugin import (
    GRPOCreditConfig,
    DrGRPOCreditConfig,
    row_scores,
    grpo_row_advantages,
    GRPOCredit,
    DrGRPOCredit,
)

__all__ = [
    "DrGRPOCredit",
    "DrGRPOCreditConfig",
    "GRPOCredit",
    "GRPOCreditConfig",
    "grpo_row_advantages",
    "row_scores",
]

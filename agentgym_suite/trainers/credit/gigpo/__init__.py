"""GiGPO, one package: episode- and step-level group advantages with anchor-state groups
(:mod:`.plugin`), and the inputs it declares (``anchor_keys``, ``step_rewards``).

``agentgym_suite.trainers.credit.gigpo`` re-exports the public names of :mod:`.plugin`, so imports of
the former single module keep working.
"""

from agentgym_suite.trainers.credit.gigpo.plugin import (
    ANCHOR_KEYS,
    STEP_REWARDS,
    NORMALIZATIONS,
    GiGPOCreditConfig,
    discounted_step_returns,
    GiGPOCredit,
    similar_anchor_keys,
)

__all__ = [
    "ANCHOR_KEYS",
    "GiGPOCredit",
    "GiGPOCreditConfig",
    "NORMALIZATIONS",
    "STEP_REWARDS",
    "discounted_step_returns",
    "similar_anchor_keys",
]

"""Credit plug-ins by name: ``get_credit_assigner("sdar", beta=0)``."""

from __future__ import annotations

from typing import Any

from agentgym_suite.trainers.credit.agentopsd import AgentOPSDCredit
from agentgym_suite.trainers.credit.base import CreditAssigner, CreditConfig
from agentgym_suite.trainers.credit.envace import EnvACECredit
from agentgym_suite.trainers.credit.gigpo import GiGPOCredit
from agentgym_suite.trainers.credit.grpo import DrGRPOCredit, GRPOCredit
from agentgym_suite.trainers.credit.rlsd import RLSDCredit
from agentgym_suite.trainers.credit.sdar import OPSDCredit, SDARCredit
from agentgym_suite.trainers.credit.skill_sd import SkillSDCredit
from agentgym_suite.trainers.credit.skillrise import SkillRiseCredit
from agentgym_suite.trainers.credit.vad import VADCredit

CREDIT_ASSIGNERS: dict[str, type[CreditAssigner]] = {
    cls.name: cls
    for cls in (
        GRPOCredit,
        DrGRPOCredit,
        GiGPOCredit,
        AgentOPSDCredit,
        SDARCredit,
        OPSDCredit,
        RLSDCredit,
        SkillSDCredit,
        SkillRiseCredit,
        EnvACECredit,
        VADCredit,
    )
}
"""Every registered plug-in class by name."""


def available_credit_assigners() -> list[str]:
    """Names accepted by ``get_credit_assigner``, in registration order."""
    return list(CREDIT_ASSIGNERS)


def get_credit_assigner(
    name: str, config: CreditConfig | None = None, **params: Any
) -> CreditAssigner:
    """Build the plug-in ``name`` from a config object or keyword parameters.

    Raises ``ValueError`` for an unknown name (listing the known ones) or an unknown or
    invalid parameter (saying which values are accepted).
    """
    try:
        cls = CREDIT_ASSIGNERS[name]
    except KeyError:
        raise ValueError(
            f"unknown credit assigner {name!r}; choose one of {available_credit_assigners()}."
        ) from None
    return cls(config, **params)

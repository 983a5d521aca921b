"""VAD (attributable distillation), one package: the plug-in and its loss (:mod:`.plugin`) and the
teacher prompts with and without the evidence that it asks the trainer to run (:mod:`.evidence`).

``agentgym_suite.trainers.credit.vad`` re-exports both modules' public names, so imports of the
former single module keep working.
"""

from agentgym_suite.trainers.credit.vad.evidence import (
    BLANK_TEXTS,
    COUNTERFACTUALS,
    NEUTRAL_PASSAGE,
    blank_token_id,
    evidence_prompts,
    fit_length,
    unrelated_donors,
)
from agentgym_suite.trainers.credit.vad.plugin import (
    PRIMARY_SIGNALS,
    TRAINER_TOP_K,
    WITH_EVIDENCE,
    WITHOUT_EVIDENCE,
    VADCredit,
    VADCreditConfig,
    centre,
    jsd,
    vad_target,
    vad_token_loss,
)

__all__ = [
    "BLANK_TEXTS",
    "COUNTERFACTUALS",
    "NEUTRAL_PASSAGE",
    "PRIMARY_SIGNALS",
    "TRAINER_TOP_K",
    "VADCredit",
    "VADCreditConfig",
    "WITHOUT_EVIDENCE",
    "WITH_EVIDENCE",
    "blank_token_id",
    "centre",
    "evidence_prompts",
    "fit_length",
    "jsd",
    "unrelated_donors",
    "vad_target",
    "vad_token_loss",
]

"""Credit-assignment plug-ins of the multi-turn GRPO trainer.

A plug-in turns a batch of rollout rows into per-token advantages and, optionally, an
auxiliary loss. The trainer (a TRL ``GRPOTrainer`` subclass) uses it like this::

    from agentgym_suite.trainers.credit import CreditBatch, get_credit_assigner

    credit = get_credit_assigner("sdar", lambda_=0.01, beta=5.0)
    # compute only what the plug-in declares:
    #   credit.needs_old_logprobs, credit.needs_teacher_logprobs, credit.needs_full_logits,
    #   credit.required_fields, credit.row_inputs (e.g. GiGPO's "anchor_keys", SkillRise's
    #   "positions": providers whose values go to CreditBatch.extras, see credit/inputs.py),
    #   credit.make_teacher_context(...) for a teacher pass: each row's privileged text and teacher prompt,
    #   credit.teacher_logit_prompts(...) for needs_full_logits (logits go to CreditBatch.aux_extras)
    batch = CreditBatch(group_ids=..., traj_ids=..., turn_idx=..., roles=..., returns=...,
                        invalid=..., completion_mask=..., teacher_logprobs=..., step=state.global_step)
    out = credit.advantages(batch)            # once per generation batch
    advantages = out.advantages               # (R, T): replaces TRL's (R,) advantages in the
                                              # PPO-clip loss (per token instead of broadcast)
    log(out.metrics)                          # "credit/<name>/<metric>"

    # inside compute_loss, for each micro-batch of rows `idx`:
    if credit.has_aux_loss:
        aux = credit.aux_loss(batch.select(idx), per_token_logps, logits=None)  # logits for vad
        loss = loss + aux.loss                # already scaled by the plug-in's coefficient
        log(aux.metrics)

Rows (``CreditBatch``): one trained generation each, with group id (the G rollouts of a
task), trajectory id, turn index, role (``agent`` | ``caller`` | ``simulator`` | ``solve`` |
``curate``), episode return, invalid flag, and ``(R, T)`` token tensors: the completion mask
(1 = trained model token) and, on demand, rollout (old) and teacher log-probs. Advantages are
exactly 0 wherever the mask is 0.

Plug-ins (``available_credit_assigners()``): ``grpo`` (verl-agent: statistics over all step
rows of a group), ``dr_grpo``, ``gigpo``, ``agentopsd`` (``granularity='turn'|'token'``),
``sdar`` (``beta=0``: GRPO+OPSD), ``opsd``, ``rlsd``, ``skill_sd``, ``skillrise``, ``envace`` (from its method
package, ``agentgym_suite.methods.envace``),
``vad``. Each has a config dataclass (``<Plugin>.config_cls``) with the papers' defaults;
invalid values and unknown names raise ``ValueError`` saying what to use instead. A plug-in of
your own (a ``CreditAssigner`` subclass) is named by its import path, ``"my_pkg.my_credit:MyCredit"``,
wherever a registry name is accepted, or by its name once a distribution declares it in the
``agentgym_suite.credit`` entry-point group (``credit_assigners()`` lists them all).
"""

from agentgym_suite.trainers.credit.base import (
    AuxLossOutput,
    CreditAssigner,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    TeacherContext,
    TeacherLogitPrompts,
    TeacherSettings,
    VOCAB_INDEX,
)
from agentgym_suite.trainers.credit.inputs import RowField, RowInput, compute_row_inputs
from agentgym_suite.trainers.credit.registry import (
    CREDIT_ASSIGNERS,
    available_credit_assigners,
    build_credit_assigner,
    credit_assigner_class,
    credit_assigners,
    get_credit_assigner,
)

__all__ = [
    "RowField",
    "RowInput",
    "compute_row_inputs",
    "CREDIT_ASSIGNERS",
    "AuxLossOutput",
    "CreditAssigner",
    "CreditBatch",
    "CreditConfig",
    "CreditOutput",
    "TeacherContext",
    "TeacherLogitPrompts",
    "TeacherSettings",
    "VOCAB_INDEX",
    "available_credit_assigners",
    "build_credit_assigner",
    "credit_assigner_class",
    "credit_assigners",
    "get_credit_assigner",
]

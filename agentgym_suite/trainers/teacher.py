"""The former home of the teacher context, kept so old imports work: it moved into the
self-distillation plug-ins' shared package, :mod:`agentgym_suite.trainers.credit.self_distillation`.

The trainer does not import it: a plug-in declares its teacher context
(``CreditAssigner.teacher_context``) and the trainer builds and asks that.
"""

from agentgym_suite.trainers.credit.self_distillation.context import (  # noqa: F401  (re-exported)
    PRIVILEGED_HEADER,
    PRIVILEGED_TAIL,
    TEACHER_CONTEXT_CONFORMANCE,
    PrivilegedTextTeacher,
    SkillTexts,
    env_response_text,
    oracle_text,
    privileged_prefix,
    skill_env_class,
    teacher_prompt_ids,
)

"""What the self-distillation plug-ins share, one package: the teacher context (:mod:`.context`).

SDAR and OPSD (``trainers/credit/sdar/``), RLSD (``rlsd/``), Skill-SD (``skill_sd/``), AgentOPSD
(``agentopsd/``) and VAD (``vad/``) each run a teacher pass whose prompt holds a privileged text; each
declares :class:`PrivilegedTextTeacher` as its ``teacher_context``, the hook the trainer builds a run's
teacher context from. The trainer imports nothing from here.
"""

from agentgym_suite.trainers.credit.self_distillation.context import (
    PRIVILEGED_HEADER,
    PRIVILEGED_TAIL,
    TEACHER_CONTEXT_CONFORMANCE,
    TEACHER_SOURCES,
    PrivilegedTextTeacher,
    SkillTexts,
    env_response_text,
    oracle_text,
    privileged_prefix,
    skill_env_class,
    teacher_prompt_ids,
)

__all__ = [
    "PRIVILEGED_HEADER",
    "PRIVILEGED_TAIL",
    "TEACHER_CONTEXT_CONFORMANCE",
    "TEACHER_SOURCES",
    "PrivilegedTextTeacher",
    "SkillTexts",
    "env_response_text",
    "oracle_text",
    "privileged_prefix",
    "skill_env_class",
    "teacher_prompt_ids",
]

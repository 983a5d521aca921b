"""The teacher context shared by the self-distillation plug-ins (ALGORITHMS §3): the privileged text
put before a row's prompt.

SDAR, OPSD, RLSD, Skill-SD and AgentOPSD read teacher log-probs, VAD teacher logits; each declares
:class:`PrivilegedTextTeacher` as its ``teacher_context`` (the generic hook of
:class:`~agentgym_suite.trainers.credit.base.CreditAssigner`), which the trainer builds once per run
and asks for each row's privileged text and teacher prompt.

The teacher is the same pre-update policy (or VAD's fixed weights) whose prompt is prefixed, as raw
text before the chat-templated prompt, with ``"[Privileged Skill Information]\\n{text}\\n\\n"``.
The text comes from one of three sources (the config's ``teacher_context``):

* ``skills`` — the env's skill texts (``TextEnv.skill_texts``, the env's skills capability): the
  authors' released texts (``agentgym data fetch skills``), picked per task as the authors pick them
  (``TextEnv.skill_for_task``: ALFWorld by game file, Search by data source, WebShop by the
  prompt's keywords); without them the env's own fallback texts per task family, which the run
  names (a warning, and ``skills_origin`` in the logged config);
* ``oracle`` — the env's oracle walkthrough from the row's state;
* ``env_response`` — the real env's response to the row's action.

When the prefixed prompt is too long, the student prompt loses its oldest tokens (history)
and the privileged text is kept whole.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Sequence

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.core.skills import SkillBook
from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.registration import env_class
from agentgym_suite.trainers.credit.base import TEACHER_SOURCES, Decode, Encode, TeacherSettings

PRIVILEGED_HEADER = "[Privileged Skill Information]\n"
PRIVILEGED_TAIL = "\n\n"


class SkillTexts:
    """The skill texts of a run's teacher: the env's book (resolved once) and its per-task pick."""

    def __init__(self, env: Any, skills_dir: str | None = None) -> None:
        """Resolve the book of ``env`` (an env class, or a registered env id; ``skills_dir`` overrides it).

        Raises:
            ValueError: when the env has no skill texts and no ``skills_dir`` is given.
        """
        found = env_class(env) if isinstance(env, str) else env
        self.env_class: type[TextEnv] = found if isinstance(found, type) and issubclass(found, TextEnv) else TextEnv
        book = self.env_class.skill_texts(skills_dir)
        if book is None:
            raise ValueError(f"{getattr(found, '__name__', env)!s} has no skill texts for the teacher; set skills_dir to a "
                             "folder of your own (general.md plus <family>.md, or the released layout), or "
                             "teacher_context: oracle.")
        self.book: SkillBook = book

    @property
    def origin(self) -> str:
        """Where the texts come from (``released ...``, ``fallback ...``, ``custom ...``)."""
        return self.book.origin

    def text(self, task_id: str, family: str, prompt_text: str) -> str:
        """The privileged text of one row, as the env's benchmark picks it."""
        return self.env_class.skill_for_task(self.book, task_id, family, prompt_text)


def skill_env_class(env_id: str, env_factory: Callable[[], Any] | None = None) -> Any:
    """The env class whose skill texts a run's teacher reads: the class of ``env_id`` (the benchmark,
    also under rehearsal), or for a custom ``env_factory`` the class of one env it makes."""
    if env_factory is None:
        return env_class(env_id)
    env = env_factory()
    try:
        return type(getattr(env, "unwrapped", env))
    finally:
        env.close()


def oracle_text(actions: Sequence[str] | None) -> str:
    """Privileged text from an oracle walkthrough."""
    if not actions:
        return "No oracle walkthrough is available from this state."
    steps = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(actions))
    return f"An action sequence that solves the task from the current state:\n{steps}"


def env_response_text(response: str) -> str:
    """Privileged text from the real env's response to the row's action."""
    return f"The environment answers the next action with:\n{response}"


def privileged_prefix(text: str) -> str:
    """The raw text put before the chat-templated student prompt."""
    return f"{PRIVILEGED_HEADER}{text}{PRIVILEGED_TAIL}"


def teacher_prompt_ids(prefix_ids: Sequence[int], prompt_ids: Sequence[int], max_tokens: int) -> list[int]:
    """Privileged prefix + student prompt, truncating the prompt's oldest tokens, never the prefix.

    If the prefix alone exceeds ``max_tokens`` it is kept whole and only the last quarter of
    the budget (at least one token) is left for the prompt.
    """
    room = max(max_tokens - len(prefix_ids), max(1, max_tokens // 4))
    kept = list(prompt_ids)[-room:]
    return list(prefix_ids) + kept


TEACHER_CONTEXT_CONFORMANCE = MethodConformance(
    name="teacher_skills", subject="the teacher's released skill texts, picked per task (teacher_context: skills)",
    upstream="github.com/ZJU-REAL/SDAR (SkillProvider, verl/trainer/ppo/rlsd_utils.py)",
    version="8b85c231df3b384131132f174f0cd893fb58b509",
    checks=("the skill text picked for each task equals the authors' SkillProvider's pick: ALFWorld by game path, "
            "search by data source and prompt, WebShop by the prompt's keywords",),
    tests=("tests/conformance/test_skills.py",))
"""What ``tests/conformance/`` checks of the skill picks against the authors' provider (declared by
:class:`PrivilegedTextTeacher`; ``agentgym conformance`` finds it through the registered plug-ins'
teacher contexts, :func:`~agentgym_suite.trainers.conformance.trainer_conformance`)."""



class PrivilegedTextTeacher:
    """The self-distillation plug-ins' :class:`~agentgym_suite.trainers.credit.base.TeacherContext`:
    each row's privileged text from ``settings.source`` (see the module docstring), put before the
    student prompt by :func:`privileged_prefix` and :func:`teacher_prompt_ids`.

    Raises:
        ValueError: for an unknown source, or ``skills`` when the env has no skill texts and no
            ``texts_dir`` is given.
    """

    conformance: ClassVar[MethodConformance | None] = TEACHER_CONTEXT_CONFORMANCE
    """What ``tests/conformance/`` checks of this context against upstream (``agentgym conformance`` reports it)."""

    def __init__(self, settings: TeacherSettings) -> None:
        if settings.source not in TEACHER_SOURCES:
            raise ValueError(f"teacher_context must be one of {list(TEACHER_SOURCES)}; got {settings.source!r}.")
        self.source = settings.source
        self.skill_texts: SkillTexts | None = None
        """The env's skill texts, resolved once (source ``skills`` only)."""
        if settings.source == "skills":
            self.skill_texts = SkillTexts(skill_env_class(settings.env_id, settings.env_factory), settings.texts_dir)

    @property
    def records_oracle(self) -> bool:
        """Source ``oracle``: the rollouts record the env's oracle at every turn."""
        return self.source == "oracle"

    @property
    def origin(self) -> str | None:
        """Where the skill texts come from (source ``skills``), else None."""
        return None if self.skill_texts is None else self.skill_texts.origin

    def text(self, row: Any, decode: Decode) -> str:
        """The privileged text of ``row`` (a ``trainers.rows.Row``) from the row's first turn."""
        first = row.turns[0]
        if self.source == "oracle":
            return oracle_text(first.oracle)
        if self.source == "env_response":
            return env_response_text(first.observation)
        assert self.skill_texts is not None
        return self.skill_texts.text(row.episode.task_id, row.family, decode(row.prompt_ids))

    def prompt_ids(self, text: str, prompt_ids: Sequence[int], encode: Encode, max_prompt_tokens: int) -> list[int]:
        """The privileged prefix of ``text`` and the student prompt, whose oldest tokens go first when
        the two exceed ``max_prompt_tokens`` plus the prefix."""
        prefix = list(encode(privileged_prefix(text)))
        return teacher_prompt_ids(prefix, prompt_ids, max_prompt_tokens + len(prefix))

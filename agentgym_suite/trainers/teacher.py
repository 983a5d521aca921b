"""Teacher context (ALGORITHMS §3): the privileged text put before a row's prompt.

The teacher is the same pre-update policy whose prompt is prefixed, as raw text before the
chat-templated prompt, with ``"[Privileged Skill Information]\\n{text}\\n\\n"``. The text comes
from one of three sources:

* ``skills`` — the env's skill texts (``TextEnv.skill_texts``): the authors' released texts
  (``agentgym data fetch skills``), picked per task as the authors pick them
  (``TextEnv.skill_for_task``: ALFWorld by game file, Search by data source, WebShop by the
  prompt's keywords); without them the env's own fallback texts per task family, which the run
  names (a warning, and ``skills_origin`` in the logged config);
* ``oracle`` — the env's oracle walkthrough from the row's state;
* ``env_response`` — the real env's response to the row's action.

When the prefixed prompt is too long, the student prompt loses its oldest tokens (history)
and the privileged text is kept whole.

A plug-in that distils whole distributions asks the trainer for teacher logits on prompts of its
own, built from these privileged texts, through its declared hook
(``CreditAssigner.teacher_logit_prompts``); the prompts themselves live with the plug-in.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.core.skills import SkillBook
from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.registration import env_class

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
"""What ``tests/conformance/`` checks of the skill picks against the authors' provider (declared by the
trainer part that runs the teacher pass, :class:`~agentgym_suite.trainers.logprob_passes.LogprobPasses`)."""

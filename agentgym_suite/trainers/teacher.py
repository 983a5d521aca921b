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

VAD's counterfactual ``x-`` (:func:`evidence_prompts`) is the same privileged prompt with the
evidence ablated, token for token: header, student prompt and position of every token are
those of ``x+``; only the evidence tokens are replaced, by as many blank tokens (``blank``) or
by as many tokens of an unrelated passage (``unrelated``).
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


COUNTERFACTUALS = ("blank", "unrelated")
"""How VAD's ``x-`` ablates the evidence: ``blank`` replaces each evidence token by a blank
token; ``unrelated`` by the tokens of another task's evidence in the same batch (or of
``NEUTRAL_PASSAGE`` when the batch holds no other task), fitted to the same length."""

BLANK_TEXTS = (" ", "_", ".")
"""Candidates for the blank token, in order: the first that encodes to exactly one token."""

NEUTRAL_PASSAGE = (
    "The river bends twice before it reaches the valley floor. In spring the water is cold and "
    "clear, and by late summer it runs low between wide banks of pale stones. A narrow footpath "
    "follows the eastern bank for most of its length, passing an old stone bridge, a row of "
    "willows and a field where sheep graze in the afternoon."
)
"""Fixed text, unrelated to every task, that fills an ``unrelated`` counterfactual when the batch
holds no evidence of another task."""

Encode = Callable[[str], Sequence[int]]
"""Text -> token ids, without special tokens."""


def blank_token_id(encode: Encode) -> int:
    """The id of the first of ``BLANK_TEXTS`` that the tokenizer encodes as one token."""
    for text in BLANK_TEXTS:
        ids = list(encode(text))
        if len(ids) == 1:
            return int(ids[0])
    raise ValueError(
        f"the tokenizer encodes none of {list(BLANK_TEXTS)} as a single token, so the evidence cannot be "
        "blanked token for token; use counterfactual: unrelated."
    )


def fit_length(ids: Sequence[int], length: int) -> list[int]:
    """``ids`` repeated and cut to exactly ``length`` tokens (``ids`` must be non-empty if ``length > 0``)."""
    if length <= 0:
        return []
    if not ids:
        raise ValueError("cannot fill a span from an empty passage.")
    reps = -(-length // len(ids))
    return (list(ids) * reps)[:length]


def unrelated_donors(evidence: Sequence[Sequence[int]], task_ids: Sequence[Any]) -> list[int | None]:
    """For each row, the row whose evidence replaces its own in an ``unrelated`` counterfactual.

    The donor of row ``i`` is the first row after it, cyclically, of another task whose evidence
    is non-empty and differs from row ``i``'s; ``None`` when no row qualifies (then
    ``NEUTRAL_PASSAGE`` is used). Deterministic in the batch order.
    """
    n = len(evidence)
    donors: list[int | None] = []
    for i in range(n):
        donor = None
        for step in range(1, n):
            j = (i + step) % n
            if task_ids[j] != task_ids[i] and evidence[j] and list(evidence[j]) != list(evidence[i]):
                donor = j
                break
        donors.append(donor)
    return donors


def evidence_prompts(
    encode: Encode,
    texts: Sequence[str],
    prompts: Sequence[Sequence[int]],
    task_ids: Sequence[Any],
    *,
    counterfactual: str,
    max_prompt_tokens: int,
) -> tuple[list[list[int]], list[list[int]]]:
    """VAD's teacher prompts ``(x+, x-)`` of each row, as token ids.

    ``x+`` is the privileged prefix (header, the row's evidence ``texts[i]``, tail) before the
    student prompt ``prompts[i]`` (whose oldest tokens go first when too long, as in
    :func:`teacher_prompt_ids`); ``x-`` is the same sequence with the evidence tokens replaced
    according to ``counterfactual`` (see ``COUNTERFACTUALS``). The two have equal length and
    differ only inside the evidence span.
    """
    if counterfactual not in COUNTERFACTUALS:
        raise ValueError(
            f"counterfactual={counterfactual!r} is not supported; choose one of {', '.join(COUNTERFACTUALS)}."
        )
    if not len(texts) == len(prompts) == len(task_ids):
        raise ValueError(
            f"got {len(texts)} texts, {len(prompts)} prompts and {len(task_ids)} task ids; give one per row."
        )
    header, tail = list(encode(PRIVILEGED_HEADER)), list(encode(PRIVILEGED_TAIL))
    evidence = [list(encode(t)) for t in texts]
    if counterfactual == "blank":
        blank = blank_token_id(encode)
        fillers = [[blank] * len(ev) for ev in evidence]
    else:
        neutral = list(encode(NEUTRAL_PASSAGE))
        donors = unrelated_donors(evidence, task_ids)
        fillers = [fit_length(neutral if d is None else evidence[d], len(ev)) for ev, d in zip(evidence, donors)]
    pos, neg = [], []
    for ev, filler, prompt in zip(evidence, fillers, prompts):
        prefix = header + ev + tail
        full = teacher_prompt_ids(prefix, prompt, max_prompt_tokens + len(prefix))
        pos.append(full)
        neg.append(header + filler + tail + full[len(prefix):])
    return pos, neg


SKILL_PICKS_CONFORMANCE = MethodConformance(
    name="teacher_skills", subject="the teacher's released skill texts, picked per task (teacher_context: skills)",
    upstream="github.com/ZJU-REAL/SDAR (SkillProvider, verl/trainer/ppo/rlsd_utils.py)",
    version="8b85c231df3b384131132f174f0cd893fb58b509",
    checks=("the skill text picked for each task equals the authors' SkillProvider's pick: ALFWorld by game path, "
            "search by data source and prompt, WebShop by the prompt's keywords",),
    tests=("tests/conformance/test_skills.py",))
"""What ``tests/conformance/`` checks of the skill picks against the authors' provider (declared by the
trainer part that runs the teacher pass, :class:`~agentgym_suite.trainers.logprob_passes.LogprobPasses`)."""

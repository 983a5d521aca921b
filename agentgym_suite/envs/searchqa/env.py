"""``SearchQA-v0``: answer a multi-hop question with a search tool (Search-R1's protocol)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.actions import ActionFormat, ParsedAction, SearchFormat
from agentgym_suite.core.data import data_dir as data_root
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.skills import SkillBook
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.envs.searchqa.datasets import Question, load_dataset, question_family
from agentgym_suite.envs.searchqa.normalize import exact_match, f1_score
from agentgym_suite.envs.searchqa.retrievers import BM25Retriever, HTTPRetriever, Passage, RetrievalError, Retriever
from agentgym_suite.envs.searchqa.skills import data_source_of, search_task_type

DEFAULT_TOPK = 3
DEFAULT_MAX_TURNS = 4
_CACHE: dict[tuple[str, str], tuple[list[Question], BM25Retriever]] = {}
_CACHE_LOCK = threading.Lock()


def _shared_dataset(name: str, root: Path) -> tuple[list[Question], BM25Retriever]:
    key = (name, str(root.resolve()))
    with _CACHE_LOCK:
        if key not in _CACHE:
            questions, passages = load_dataset(name, root)
            _CACHE[key] = (questions, BM25Retriever(passages))
        return _CACHE[key]


def format_passages(passages: list[Passage]) -> str:
    """Search-R1's rendering of retrieved passages inside ``<information>`` tags."""
    lines = [f'Doc {i}(Title: "{p.title}") {p.text}' for i, p in enumerate(passages, start=1)]
    body = "\n".join(lines) if lines else "No passages matched the query."
    return f"<information>{body}</information>"


class SearchQAEnv(TextEnv):
    """Multi-hop QA (HotpotQA, MuSiQue) with ``<search>``/``<answer>`` actions.

    ``<search>query</search>`` returns the top-k passages inside ``<information>…</information>``;
    ``<answer>text</answer>`` ends the episode with reward = exact match after SQuAD normalisation
    (also ``info["score"]``; token F1 in ``info["f1"]``). After ``max_turns`` actions without an
    answer the episode is truncated.

    Args:
        dataset: ``hotpotqa`` or ``musique``.
        retriever: ``bm25`` (local, over the dataset's corpus), ``http`` (needs ``retriever_url``)
            or any :class:`~agentgym_suite.envs.searchqa.retrievers.Retriever`.
        retriever_url: endpoint of a Search-R1 retrieval server (implies ``retriever="http"``).
        retriever_timeout: seconds before an HTTP search gives up (the agent then sees an error).
        topk: passages per search.
        max_turns: actions per episode (registration uses 4).
        require_think: make ``<think>`` mandatory in the action format.
        data_dir: directory holding the dataset folders (default ``$AGENTGYM_DATA/searchqa``).
        success_reward: reward of a correct answer (default 1.0).
        **kwargs: ``privileged``, ``invalid_action``, ``render_mode``, ``action_format``.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``search_query``: str: the query of a <search> action.
        ``retrieval_error``: str: why the retriever failed on the query.
        ``answer``: str: the submitted answer.
        ``f1``: float: token F1 of the answer against the gold answers.
    """

    benchmark = "searchqa"
    info_keys: ClassVar[dict[str, str]] = {
        "search_query": "str: the query of a <search> action.",
        "retrieval_error": "str: why the retriever failed on the query.",
        "answer": "str: the submitted answer.",
        "f1": "float: token F1 of the answer against the gold answers.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(goes_on_kwargs={"max_turns": 12})
    """The budget of 4 turns counts every action, refused ones included, as Search-R1 counts every
    response; the hostile-input tests give the oracle room to finish after them."""
    default_action_format = "search"
    prompt_description = "a question-answering task with a search engine"

    def __init__(
        self,
        *,
        dataset: str = "hotpotqa",
        retriever: str | Retriever = "bm25",
        retriever_url: str | None = None,
        retriever_timeout: float = 10.0,
        topk: int = DEFAULT_TOPK,
        max_turns: int = DEFAULT_MAX_TURNS,
        require_think: bool = False,
        data_dir: str | Path | None = None,
        success_reward: float = 1.0,
        action_format: str | ActionFormat | None = None,
        privileged: bool = False,
        invalid_action: str = "explain",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(action_format=action_format or SearchFormat(require_think=require_think),
                         privileged=privileged, invalid_action=invalid_action, render_mode=render_mode)
        if topk < 1 or max_turns < 1:
            raise ValueError(f"topk={topk} and max_turns={max_turns} must both be at least 1.")
        root = Path(data_dir) if data_dir is not None else data_root() / "searchqa"
        questions, local = _shared_dataset(dataset, root)
        self.dataset = dataset
        self.questions = {q.id: q for q in questions}
        self._ids = [q.id for q in questions]
        if retriever_url is not None:
            retriever = "http"
        if retriever == "bm25":
            self.retriever: Retriever = local
        elif retriever == "http":
            if retriever_url is None:
                raise ValueError("retriever='http' needs retriever_url, e.g. http://127.0.0.1:8000/retrieve.")
            self.retriever = HTTPRetriever(retriever_url, timeout=retriever_timeout)
        elif isinstance(retriever, str):
            raise ValueError(f"retriever={retriever!r}; choose 'bm25', 'http' or pass a Retriever object.")
        else:
            self.retriever = retriever
        self.topk = int(topk)
        self.max_turns = int(max_turns)
        self.success_reward = float(success_reward)
        self._question: Question | None = None
        self._seen_titles: set[str] = set()

    # ------------------------------------------------------------------ TextEnv API
    def task_ids(self) -> list[str]:
        return list(self._ids)

    def task_family(self, task_id: str) -> str:
        """Comparison, multi-hop or single-hop, from the question's type (see :func:`.datasets.question_family`)."""
        return question_family(self.questions[task_id], self.dataset)

    skills_released: ClassVar[str] = "search"
    skills_fallback: ClassVar[Path | None] = Path(__file__).with_name("skills")

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        """Released texts: the authors' rule by data source (:mod:`.skills`); fallback texts: the family's."""
        if not book.mapped:
            return book.for_family(family)
        task_type = search_task_type(data_source_of(task_id), prompt_text)
        return book.compose([task_type] if task_type else [])

    @property
    def question(self) -> Question:
        """The current question record."""
        if self._question is None:
            raise RuntimeError("Call reset() first.")
        return self._question

    def _load_task(self, task_id: str) -> TaskStart:
        self._question = self.questions[task_id]
        self._seen_titles = set()
        observation = (f"Question: {self._question.question}\n"
                       f"You may search up to {self.max_turns - 1} times before answering.")
        return TaskStart(observation=observation, task=self._question.question)

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        question = self.question
        if parsed.kind == "answer":
            em = exact_match(command, question.answers)
            return StepOutcome(
                f"Your answer: {command}", em * self.success_reward, em, won=em == 1.0, terminated=True,
                extra={"f1": f1_score(command, question.answers), "answer": command},
            )
        if parsed.kind != "search":
            return StepOutcome("Invalid action: use <search>query</search> or <answer>text</answer>.",
                               0.0, 0.0, action_valid=False)
        extra: dict[str, Any] = {"search_query": command}
        try:
            passages = self.retriever.search(command, self.topk)
            observation = format_passages(passages)
            self._seen_titles.update(p.title for p in passages)
        except RetrievalError as err:
            observation = f"<information>Search failed: {err}. Try again or answer.</information>"
            extra["retrieval_error"] = str(err)
        truncated = self.turn >= self.max_turns
        if truncated:
            observation += "\nNo turns left: the episode ended without an answer."
        return StepOutcome(observation, 0.0, 0.0, truncated=truncated, extra=extra)

    def _privileged_info(self) -> dict[str, Any]:
        question = self.question
        return {"oracle": self.oracle(), "answers": list(question.answers),
                "supporting_titles": list(question.supporting_titles)}

    def oracle(self) -> list[str]:
        """Search each supporting passage's title (as many as the turn budget allows), then answer."""
        if self._question is None:
            return []
        left = self.max_turns - self.turn
        if left <= 0:
            return []
        searches = [f"<search>{t}</search>" for t in self._question.supporting_titles if t not in self._seen_titles]
        return searches[: left - 1] + [f"<answer>{self._question.answers[0]}</answer>"]

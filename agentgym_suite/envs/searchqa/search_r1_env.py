"""``SearchR1-v0``: Search-R1's question sets played as Search-R1 plays them (see :mod:`.search_r1`)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.data import data_dir as data_root
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.envs.searchqa.corpus import CorpusBM25Retriever, JsonlCorpus
from agentgym_suite.envs.searchqa.data_source import E5_INDEX, E5_MODEL_DIR, SEARCH_R1_TEST, WIKI18_CORPUS
from agentgym_suite.envs.searchqa.datasets import Question, load_search_r1, parse_search_r1_set
from agentgym_suite.envs.searchqa.env import SearchQAEnv
from agentgym_suite.envs.searchqa.normalize import exact_match, f1_score
from agentgym_suite.envs.searchqa.retrievers import HTTPRetriever, RetrievalError, Retriever
from agentgym_suite.envs.searchqa.search_r1 import (
    INVALID_ACTION,
    MAX_OBS_LENGTH,
    SearchR1Format,
    cut_observation,
    cut_response,
    information,
    prompt,
    scored_answer,
)

PAPER_TOPK = 3
PAPER_MAX_TURNS = 4
_RETRIEVERS: dict[tuple[str, ...], Retriever] = {}
_TOKENIZERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _shared(key: tuple[str, ...], build: Any) -> Retriever:
    with _LOCK:
        if key not in _RETRIEVERS:
            _RETRIEVERS[key] = build()
        return _RETRIEVERS[key]


def _tokenizer(name: str) -> Any:
    """The tokenizer ``name`` (loaded once per process)."""
    with _LOCK:
        if name not in _TOKENIZERS:
            from transformers import AutoTokenizer

            try:
                _TOKENIZERS[name] = AutoTokenizer.from_pretrained(name)
            except (OSError, ValueError) as err:
                raise ValueError(f"obs_tokenizer={name!r} cannot be loaded ({err}); name the policy's tokenizer by a "
                                 "local folder or a Hugging Face id that is cached or reachable.") from err
        return _TOKENIZERS[name]


LEFT_PADDING_DEPARTURE = (
    "the policy's tokenizer pads on the left: Search-R1 pads a turn's observations to the batch's longest before "
    "cutting at max_obs_length, so with left padding what an over-long batch keeps of each observation depends on "
    "the other episodes (a short one can lose everything); an episode here keeps its first max_obs_length tokens, "
    "as upstream does for a batch of one")
"""The labelled departure for a left-padding tokenizer (upstream's cut cannot be reproduced one episode at a time)."""


class SearchR1Env(SearchQAEnv):
    """Search-R1's evaluation (or training) questions with its prompt, action parsing, passage format,
    top-3 retrieval, 4 search turns and a last answer turn, scored by Search-R1's reward.

    The reward is Search-R1's ``compute_score_em`` (1.0 or 0.0, times ``success_reward``) over the
    solution string its rollout builds: the prompt, every cut response and every observation. It
    reads the last ``<answer>…</answer>`` of that string when the string holds two or more (the
    prompt's example is one), so, as upstream, of several answers in one response the last
    counts, and an answer tag inside a search query or a retrieved passage counts too, even in an
    episode that never answers (see :mod:`.search_r1`). ``info["answer"]`` is the answer scored
    (absent when none), ``info["f1"]`` its token F1.
    Each question's dataset is its task type, so ``summary.json``'s ``by_task_type`` holds the
    per-dataset exact match Search-R1's tables report; ``info["retriever"]`` and ``info["corpus"]``
    name what retrieved. The env renders the prompt itself (``info["prompt_messages"]``): Search-R1's
    user message, then each (cut) response as an assistant turn and each observation as a user turn;
    Search-R1 appends them to one running sequence instead, which a chat template cannot express.

    Args:
        dataset: ``search_r1_test`` (NQ, TriviaQA, PopQA, HotpotQA, 2WikiMultiHopQA, MuSiQue,
            Bamboogle), ``search_r1_test:nq,bamboogle`` (some of them) or ``search_r1_train``.
        retriever: ``bm25`` (default, offline: BM25 over ``corpus``), ``e5`` (Search-R1's dense
            retriever: ``e5_model`` over the FAISS index ``e5_index``; needs ``faiss``), ``http``
            (a Search-R1 retrieval server at ``retriever_url``) or a
            :class:`~agentgym_suite.envs.searchqa.retrievers.Retriever`.
        corpus: Search-R1-format JSONL corpus (default ``$AGENTGYM_DATA/searchqa/wiki-18/wiki-18.jsonl``).
        e5_model, e5_index: the e5 model folder and its index (defaults under ``searchqa/``).
        e5_device: torch device of the e5 query encoder.
        topk: passages per search (Search-R1: 3).
        max_turns: search turns before the last answer turn (Search-R1's evaluation: 4), so an
            episode has at most ``max_turns + 1`` actions (the registration's step limit).
        data_dir: the ``searchqa`` data folder (default ``$AGENTGYM_DATA/searchqa``).
        obs_tokenizer: the policy's tokenizer (a Hugging Face model id or folder, read with
            ``AutoTokenizer``): every observation is cut to its first ``max_obs_length`` tokens of it, as
            Search-R1 cuts them (:func:`~.search_r1.cut_observation`). ``agentgym eval`` sets it to the
            agent's model (``hf:PATH``, ``vllm:PATH``, ``tiny``; ``policy_tokenizer_setting``), the
            trainer's env factory to the model being trained; a config may set it in ``env_kwargs``. None:
            observations are not cut, a departure the run names (``leaderboard_departures``). A tokenizer that pads
            on the left is a named departure too: upstream's cut then depends on the batch, and an episode here
            keeps its first ``max_obs_length`` tokens (upstream's batch of one).
        max_obs_length: tokens an observation keeps (Search-R1's scripts: 500).
        success_reward, privileged, invalid_action, render_mode: as :class:`SearchQAEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info` and :class:`SearchQAEnv`'s):
        ``retriever``: str: the retriever that answered searches (bm25, e5, http or a class name).
        ``corpus``: str: the passage corpus searched (a file path, or "the server's").
        ``no_answer``: str: why the episode ended without an answer action (a search in the last turn).
        ``solution``: str: at the episode's end, the solution string Search-R1's reward reads.
    """

    info_keys: ClassVar[dict[str, str]] = {
        "retriever": "str: the retriever that answered searches (bm25, e5, http or a class name).",
        "corpus": "str: the passage corpus searched (a file path, or \"the server's\").",
        "no_answer": "str: why the episode ended without an answer action (a search in the last turn).",
        "solution": "str: at the episode's end, the solution string Search-R1's reward reads (prompt, cut "
                    "responses, observations).",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    label_keys: ClassVar[tuple[str, ...]] = ("retriever", "corpus")
    default_action_format = "search"
    fixture_replaces_data = True
    policy_tokenizer_setting = "obs_tokenizer"

    def __init__(
        self,
        *,
        dataset: str = "search_r1_test",
        retriever: str | Retriever = "bm25",
        corpus: str | Path | None = None,
        e5_model: str | Path | None = None,
        e5_index: str | Path | None = None,
        e5_device: str = "cpu",
        retriever_url: str | None = None,
        retriever_timeout: float = 30.0,
        topk: int = PAPER_TOPK,
        max_turns: int = PAPER_MAX_TURNS,
        data_dir: str | Path | None = None,
        obs_tokenizer: str | Path | None = None,
        max_obs_length: int = MAX_OBS_LENGTH,
        success_reward: float = 1.0,
        privileged: bool = False,
        invalid_action: str = "explain",
        render_mode: str | None = None,
    ) -> None:
        TextEnv.__init__(self, action_format=SearchR1Format(), privileged=privileged, invalid_action=invalid_action,
                         render_mode=render_mode)
        if topk < 1 or max_turns < 0 or max_obs_length < 1:
            raise ValueError(f"topk={topk} and max_obs_length={max_obs_length} must be at least 1 and "
                             f"max_turns={max_turns} at least 0.")
        root = Path(data_dir) if data_dir is not None else data_root() / "searchqa"
        parse_search_r1_set(dataset)
        questions = load_search_r1(dataset, root)
        self.dataset = dataset
        self.questions = {q.id: q for q in questions}
        self._ids = [q.id for q in questions]
        self.corpus_path = Path(corpus) if corpus is not None else root / WIKI18_CORPUS
        if retriever_url is not None:
            retriever = "http"
        self.retriever_name = retriever if isinstance(retriever, str) else type(retriever).__name__
        self.retriever = self._make_retriever(retriever, root, retriever_url, retriever_timeout,
                                              e5_model, e5_index, e5_device)
        self.topk = int(topk)
        self.max_turns = int(max_turns)
        self.success_reward = float(success_reward)
        self.obs_tokenizer = str(obs_tokenizer) if obs_tokenizer is not None else None
        self.max_obs_length = int(max_obs_length)
        self._tokenizer = _tokenizer(self.obs_tokenizer) if self.obs_tokenizer is not None else None
        self._question: Question | None = None
        self._seen_titles: set[str] = set()
        self._messages: list[dict[str, str]] = []
        self._solution = ""

    def _make_retriever(self, kind: str | Retriever, root: Path, url: str | None, timeout: float,
                        e5_model: str | Path | None, e5_index: str | Path | None, device: str) -> Retriever:
        if not isinstance(kind, str):
            return kind
        corpus_key = str(self.corpus_path.resolve())
        if kind == "bm25":
            return _shared(("bm25", corpus_key), lambda: CorpusBM25Retriever(JsonlCorpus(self.corpus_path)))
        if kind == "e5":
            from agentgym_suite.envs.searchqa.e5 import E5Retriever

            model = Path(e5_model) if e5_model is not None else root / E5_MODEL_DIR
            index = Path(e5_index) if e5_index is not None else root / E5_INDEX
            return _shared(("e5", corpus_key, str(model), str(index), device),
                           lambda: E5Retriever(model, index, JsonlCorpus(self.corpus_path), device=device))
        if kind == "http":
            if url is None:
                raise ValueError("retriever='http' needs retriever_url, e.g. http://127.0.0.1:8000/retrieve.")
            return HTTPRetriever(url, timeout=timeout)
        raise ValueError(f"retriever={kind!r}; choose 'bm25', 'e5', 'http' or pass a Retriever object.")

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Two questions per evaluation set and a four-passage corpus, in the published formats."""
        passages = [("Paris", "Paris is the capital of France."), ("Everest", "Mount Everest is 8,849 m high."),
                    ("Python", "Python was created by Guido van Rossum."), ("Nile", "The Nile flows into the Mediterranean.")]
        scratch.mkdir(parents=True, exist_ok=True)
        with (scratch / "corpus.jsonl").open("w", encoding="utf-8") as out:
            for number, (title, text) in enumerate(passages):
                out.write(json.dumps({"id": str(number), "contents": f'"{title}"\n{text}'}) + "\n")
        for name, (rel, _) in SEARCH_R1_TEST.items():
            path = scratch / "flashrag" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as out:
                out.write(json.dumps({"id": f"{name}_0", "question": "what is the capital of france",
                                      "golden_answers": ["Paris"]}) + "\n")
                out.write(json.dumps({"id": f"{name}_1", "question": "Who created Python?",
                                      "golden_answers": ["Guido van Rossum", "van Rossum"]}) + "\n")
        return {"data_dir": str(scratch), "corpus": str(scratch / "corpus.jsonl")}

    # ------------------------------------------------------------------ TextEnv API
    def task_family(self, task_id: str) -> str:
        """Multi-hop for HotpotQA, 2WikiMultiHopQA, MuSiQue and Bamboogle; single-hop for the others."""
        multi = {"hotpotqa", "2wikimultihopqa", "musique", "bamboogle"}
        return "search_multi_hop" if self.questions[task_id].kind in multi else "search_single_hop"

    def evaluation_split(self) -> str:
        """The task set played (``search_r1_test``, ``search_r1_test:nq``, ``search_r1_train``)."""
        return self.dataset

    def leaderboard_departures(self) -> list[str]:
        """Local BM25 instead of e5, another corpus, or another top-k / turn budget than the paper's."""
        departures = []
        if self.retriever_name == "bm25":
            departures.append("retrieval is local BM25; Search-R1's tables use e5-base-v2 over Wikipedia-2018 "
                              "(retriever='e5', or an http server running Search-R1's retrieval_server.py)")
        if self.retriever_name in ("bm25", "e5") and self.corpus_path.name != "wiki-18.jsonl":
            departures.append(f"the corpus is {self.corpus_path.name}, not Search-R1's Wikipedia-2018 (wiki-18.jsonl)")
        if self.topk != PAPER_TOPK or self.max_turns != PAPER_MAX_TURNS:
            departures.append(f"top-{self.topk} and {self.max_turns} search turns; Search-R1 evaluates with top-3 and 4")
        if self.obs_tokenizer is None:
            departures.append(f"observations are not cut to Search-R1's max_obs_length ({MAX_OBS_LENGTH} tokens of the "
                              "policy's tokenizer); name that tokenizer with obs_tokenizer=...")
        elif self.max_obs_length != MAX_OBS_LENGTH:
            departures.append(f"observations are cut to {self.max_obs_length} tokens; Search-R1 cuts them to "
                              f"{MAX_OBS_LENGTH}")
        if self._tokenizer is not None and getattr(self._tokenizer, "padding_side", "right") == "left":
            departures.append(LEFT_PADDING_DEPARTURE)
        return departures

    def _labels(self) -> dict[str, str]:
        corpus = str(self.corpus_path) if self.retriever_name in ("bm25", "e5") else "the server's"
        return {"retriever": self.retriever_name, "corpus": corpus}

    def _load_task(self, task_id: str) -> TaskStart:
        self._question = self.questions[task_id]
        self._seen_titles = set()
        text = prompt(self._question.question)
        self._messages = [{"role": "user", "content": text}]
        self._solution = text
        return TaskStart(observation=text, task=self._question.question,
                         extra={"task_type": self._question.kind, "prompt_messages": list(self._messages),
                                **self._labels()})

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        last_turn = self.turn > self.max_turns
        extra: dict[str, Any] = dict(self._labels())
        if parsed.kind == "answer":
            return self._scored(parsed, extra, terminated=True)
        if last_turn:
            return self._scored(parsed, {**extra, "no_answer": "the last turn gave no answer"}, truncated=True,
                                action_valid=parsed.kind == "search")
        if parsed.kind != "search":
            return self._outcome(INVALID_ACTION, 0.0, 0.0, parsed, action_valid=False, extra=extra)
        extra["search_query"] = command
        try:
            passages = self.retriever.search(command, self.topk)
            self._seen_titles.update(p.title for p in passages)
            observation = information(passages)
        except RetrievalError as err:
            observation = information([])
            extra["retrieval_error"] = str(err)
        return self._outcome(observation, 0.0, 0.0, parsed, extra=extra)

    def _scored(self, parsed: ParsedAction, extra: dict[str, Any], **flags: Any) -> StepOutcome:
        """The episode's last step, scored as Search-R1's ``compute_score_em`` scores its solution string."""
        golds = self.question.answers
        solution = self._solution + cut_response(parsed.raw)
        answer = scored_answer(solution)
        em = exact_match(answer, golds) if answer is not None else 0.0
        extra = {**extra, "solution": solution}
        if answer is not None:
            extra.update(answer=answer, f1=f1_score(answer, golds))
        return self._outcome("", em * self.success_reward, em, parsed, won=em == 1.0, extra=extra, **flags)

    def _outcome(self, observation: str, reward: float, score: float, parsed: ParsedAction, *,
                 extra: dict[str, Any], **flags: Any) -> StepOutcome:
        if observation and self._tokenizer is not None:
            observation = cut_observation(observation, self._tokenizer, self.max_obs_length)
        self._messages.append({"role": "assistant", "content": cut_response(parsed.raw)})
        self._solution += cut_response(parsed.raw) + observation
        if observation:
            self._messages.append({"role": "user", "content": observation})
        return StepOutcome(observation, reward, score, extra={**extra, "prompt_messages": list(self._messages)}, **flags)

    def _privileged_info(self) -> dict[str, Any]:
        return {"oracle": self.oracle(), "answers": list(self.question.answers)}

    def oracle(self) -> list[str]:
        """Answer with the first gold answer (Search-R1's sets name no supporting passages)."""
        if self._question is None:
            return []
        return [f"<answer>{self._question.answers[0]}</answer>"] if self._question.answers else []

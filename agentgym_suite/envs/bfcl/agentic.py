"""The conversation of one BFCL agentic task (web search, memory): what the env asks, when, and the check.

A web-search task is one question: the agent searches and fetches pages, then answers in
words. A memory task may first hold its scenario's prerequisite conversations (see
:mod:`.memory`), each in a fresh context, before the question. In both, a text reply ends the
user turn; the question's text reply is checked with bfcl-eval's ``agentic_checker`` (one of
the expected answers must appear in it, after its normalisation).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_suite.envs.bfcl import data, memory, prompts
from agentgym_suite.envs.bfcl.backends import BackendSession
from agentgym_suite.envs.bfcl.call_strings import prompting_call_list
from agentgym_suite.envs.bfcl.web_search import make_backend


def _user_texts(turn: list[dict[str, Any]]) -> tuple[str, str]:
    system = "\n\n".join(str(m.get("content", "")) for m in turn if m.get("role") == "system")
    user = "\n\n".join(str(m.get("content", "")) for m in turn if m.get("role") != "system")
    return system, user


def final_answer_text(text: str) -> str:
    """The part of a reply bfcl-eval's FC handlers check: what follows the last ``</think>``."""
    return text.split("</think>")[-1].strip()


def check_answer(text: str, answers: list[str]) -> tuple[bool, str]:
    """bfcl-eval's agentic check of a final reply: (passed, reason)."""
    from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

    result = agentic_checker(final_answer_text(text), list(answers))
    if result["valid"]:
        return True, "an expected answer is in the reply"
    return False, str(result.get("error_message", "no expected answer in the reply"))


@dataclass
class Dialogue:
    """One conversation of an agentic task: its id, kind and user turns."""

    test_id: str
    kind: str
    """``prereq`` (a memory-writing conversation) or ``question``."""
    turns: list[list[dict[str, Any]]]


@dataclass
class AgenticTask:
    """State of one agentic episode.

    Args:
        category: a web-search or memory category.
        task_id: the question's id.
        style: ``fc`` or ``prompting`` (see :mod:`.prompts`).
        memory_dir: where memory snapshots live (memory categories).
        web_corpus: corpus source for web search (None: pages generated from the hop sources).
        web_backend: web-search backend name (see :func:`.web_search.make_backend`).
    """

    category: str
    task_id: str
    style: str
    memory_dir: Path | None = None
    web_corpus: str | None = None
    web_backend: str = "local"
    queue: list[Dialogue] = field(default_factory=list)
    current: Dialogue | None = None
    turn: int = 0
    steps_in_turn: int = 0
    session: BackendSession | None = None
    backend: Any = None
    system: str = ""
    final_text: str | None = None
    calls_this_turn: bool = False
    forced_quit: bool = False

    def __post_init__(self) -> None:
        self.entry = data.load_questions(self.category)[self.task_id]
        self.answers = list(data.load_answers(self.category).get(self.task_id) or [])
        self.docs = [prompts.with_language_hint(d) for d in data.load_func_docs(self.class_name)]
        self.step_limit = prompts.max_steps_per_turn()
        question = Dialogue(self.task_id, "question", list(self.entry["question"]))
        if self.is_memory:
            assert self.memory_dir is not None
            prereqs = data.load_memory_prereqs(self.category, self.scenario)
            start = memory.first_missing_prereq(self.memory_dir, [p["id"] for p in prereqs])
            self.queue = [Dialogue(p["id"], "prereq", list(p["question"])) for p in prereqs[start:]]
        self.queue.append(question)

    # ------------------------------------------------------------------ facts
    @property
    def is_memory(self) -> bool:
        """True for the memory categories."""
        return self.category in data.MEMORY

    @property
    def class_name(self) -> str:
        """The backend class whose functions the agent gets."""
        return memory.class_name(self.category) if self.is_memory else "WebSearchAPI"

    @property
    def scenario(self) -> str:
        """The memory scenario of the question (``""`` for web search)."""
        return str(self.entry.get("scenario", ""))

    @property
    def phase(self) -> str:
        """``prereq`` or ``question``: the kind of the conversation being held."""
        return self.current.kind if self.current else "question"

    @property
    def question_text(self) -> str:
        """The question the episode is scored on."""
        return _user_texts(self.entry["question"][0])[1]

    @property
    def prereqs_left(self) -> int:
        """Prerequisite conversations still to hold, the current one included."""
        pending = [c for c in self.queue if c.kind == "prereq"]
        return len(pending) + (1 if self.phase == "prereq" else 0)

    def turn_budget(self) -> int:
        """User turns this episode still holds (a lower bound of the steps it needs)."""
        left = len(self.current.turns) - self.turn if self.current else 0
        return left + sum(len(c.turns) for c in self.queue)

    # ------------------------------------------------------------------ conversation flow
    def begin(self) -> tuple[str, str]:
        """Start the next conversation: its backend session, system prompt and first user message."""
        self.current = self.queue.pop(0)
        self.turn, self.steps_in_turn = 0, 0
        instance = self._backend(self.current)
        self.backend = instance
        self.session = BackendSession.from_instances({self.class_name: instance}, [d["name"] for d in self.docs])
        entry_system, user = _user_texts(self.current.turns[0])
        parts: list[str] = []
        if self.style == "prompting":
            parts.append(prompts.default_system_prompt(self.docs))
        if self.is_memory:
            parts.append(prompts.memory_instruction(self.category, self.scenario, memory.memory_content(instance)))
        if self.current.kind == "question":
            parts.append(prompts.agentic_answer_format())
        parts.append(entry_system)
        self.system = prompts.join_system(*parts)
        return self.system, user

    def _backend(self, conversation: Dialogue) -> Any:
        if self.is_memory:
            assert self.memory_dir is not None
            return memory.open_memory(self.category, self.memory_dir, conversation.test_id, self.scenario)
        api = make_backend(self.web_backend, self.web_corpus)
        api._load_scenario({"show_snippet": self.category == "web_search_base"})
        return api

    def text_reply(self, text: str) -> tuple[str | None, bool]:
        """The agent answered in words: (next user message or None to end, True when a new conversation began)."""
        assert self.current is not None
        self.steps_in_turn = 0
        if self.current.kind == "question":
            self.final_text = text
            return None, False
        self.turn += 1
        if self.turn < len(self.current.turns):
            return _user_texts(self.current.turns[self.turn])[1], False
        return self._next_conversation(), True

    def _next_conversation(self) -> str:
        memory.save_memory(self.backend)
        _, user = self.begin()
        return user

    def after_calls(self) -> str:
        """Count a message of calls against bfcl-eval's step limit of a turn.

        Returns ``""`` to go on, ``"quit"`` when the question's turn ran past the limit (the
        episode then fails, as bfcl-eval force-quits it), or ``"next"`` when a prerequisite
        conversation did (it is cut there, saved, and the next conversation begins).
        """
        self.steps_in_turn += 1
        if self.steps_in_turn <= self.step_limit:
            return ""
        self.forced_quit = self.phase == "question"
        return "quit" if self.forced_quit else "next"

    def cut_conversation(self) -> str:
        """End a prerequisite conversation early (step limit): save it and begin the next one."""
        return self._next_conversation()

    # ------------------------------------------------------------------ scoring and oracle
    def evaluate(self) -> tuple[bool, str]:
        """(won, reason) of the question's final reply."""
        if self.phase != "question" or self.final_text is None:
            reason = f"the model was stopped after {self.step_limit} steps in one turn" if self.forced_quit else \
                "the question was not answered"
            return False, reason
        return check_answer(self.final_text, self.answers)

    def oracle_answer(self) -> str:
        """A final reply in bfcl-eval's answer format holding the first expected answer."""
        answer = self.answers[0] if self.answers else "I do not know"
        return "{'answer': " + repr(str(answer)) + ", 'context': 'from the sources found'}"

    def oracle(self, calls_made: bool) -> list[str]:
        """Actions that finish the episode from here: text replies to the remaining prerequisite
        turns, then (web search) the searches of every hop and the answer."""
        actions: list[str] = []
        if self.phase == "prereq":
            assert self.current is not None
            left = len(self.current.turns) - self.turn + sum(len(c.turns) for c in self.queue if c.kind == "prereq")
            actions += ["Thank you, I have noted that."] * left
        if not self.is_memory and not (calls_made and self.phase == "question"):
            actions.append(self._search_calls())
        actions.append(self.oracle_answer())
        return actions

    def _search_calls(self) -> str:
        record = data.load_answer_records(self.category).get(self.task_id) or {}
        blocks = []
        for hop in record.get("source") or []:
            blocks.append({"name": "search_engine_query", "arguments": {"keywords": str(hop.get("subquestion", ""))}})
            if self.category == "web_search_no_snippet" and str(hop.get("source", "")).startswith("http"):
                blocks.append({"name": "fetch_url_content", "arguments": {"url": str(hop["source"]), "mode": "truncate"}})
        if self.style == "prompting":  # what a prompting model writes, bfcl-eval's decoder reads
            return prompting_call_list([(b["name"], b["arguments"]) for b in blocks])
        return "\n".join("<tool_call>\n" + json.dumps(b, ensure_ascii=False) + "\n</tool_call>" for b in blocks)


def default_memory_dir() -> Path:
    """A fresh folder for one env's memory snapshots (removed when the env closes)."""
    return Path(tempfile.mkdtemp(prefix="bfcl-memory-"))

"""``BFCLEnv``: the Berkeley Function Calling Leaderboard v4 as a tool env.

Single-turn categories end after the first assistant message; its calls are judged by
bfcl-eval's own AST checker (:mod:`.upstream`; Java and JavaScript arguments through its type
converters), irrelevance categories succeed when no call is made and ``live_relevance`` when
one is. Function names reach the model with ``.`` replaced by ``_``, as bfcl-eval's
function-calling handlers send them to OpenAI-compatible servers, and the checker compares
them the same way. ``format_sensitivity`` re-runs 200 entries under bfcl-eval's 26 prompt
formats (:mod:`.format_sensitivity`).

Multi-turn categories run every call on BFCL's executable backends, as bfcl-eval executes every
decoded call (wrong arguments reach the backend; unknown functions get an error result). After
each user turn the backend state and results are compared with a second set of backends that
executed that turn's ground truth; reward 1 only when every turn passes. A user turn that takes
more than 20 model steps force-quits the entry, as bfcl-eval's inference does (the entry fails
unless it was the last turn, which is still checked). The agentic categories (web search,
memory on bfcl-eval's memory backends; see :mod:`.agentic`) end with a reply in words that must
contain an expected answer.

Prompts are bfcl-eval's (see :mod:`.prompts`): with ``system_prompt="fc"`` (default) no system
text beyond the entry's own, as its function-calling handlers; with ``"prompting"`` its default
system prompt over the entry's function docs with its language hint and, for Java and JavaScript,
its type texts; call lists ``[f(a=1)]`` are decoded by bfcl-eval's own decoder for the entry's
language (:mod:`.upstream_decode`; its tree-sitter parsers for Java and JavaScript) and the
single-turn checker receives its output unchanged. In multi-turn entries the decoded calls run as
bfcl-eval's executor runs the execution strings it writes from them (tuples kept, a nested call with
keyword arguments run first through the backend, method names inside strings rewritten with the
instance name; :func:`~.upstream_decode.executed_value`), never through ``eval``; so do the calls of the
web-search and memory conversations, which bfcl-eval plays with the same multi-turn inference (every
call goes straight to the backend method whatever its arguments, and the model reads bfcl-eval's
result texts). Function-calling calls run as its FC handlers' execution strings (``name(k=repr(v))``),
whose method names inside strings are rewritten the same way. Function names are sent and compared as the
emulated model config's ``underscore_to_dot`` says (``.`` replaced by ``_`` by default with
``fc``, as its FC handlers for OpenAI-compatible servers; as they are with ``prompting``).

Departures from the leaderboard (``leaderboard_departures``, written into ``summary.json``): web
search on the offline local corpus (the default) instead of bfcl-eval's live SerpAPI search
(``web_search_backend="serpapi"`` runs bfcl-eval's own backend); in ``format_sensitivity`` and the
``prompting`` style, python call lists holding arithmetic or a lambda (which bfcl-eval evaluates
with ``eval``) are decoded by the suite's own evaluator (:data:`PYTHON_DECODE_DEPARTURE`). Two more are
reported by the episode in which they happen (``info["departure_in_play"]``, also added to ``summary.json``),
in both styles: in multi-turn, web-search and memory conversations, a call to a Python builtin's name (or one
bfcl-eval's executor refuses, or no dotted identifier) gets the suite's refusal as its result
(:data:`SUITE_REFUSAL_DEPARTURE`), and a method name inside a string argument is rewritten with an instance
name holding ``agentgym`` for the model's name (:data:`INSTANCE_NAME_DEPARTURE`). In ``prompting`` style only
what bfcl-eval's prompting decoder reads is a call: a ``<tool_call>`` block is the model's words there. Conformance with bfcl-eval's checkers is tested in
``tests/conformance/test_bfcl.py``.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any, ClassVar, Sequence

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome
from agentgym_suite.core.tool_calls import ParsedMessage, ToolCall, ToolCallError, parse_tool_calls
from agentgym_suite.core.tool_env import MAX_TOOL_RESULT_CHARS, Conversation, ToolEnv, ToolRecord
from agentgym_suite.envs.bfcl import data, format_sensitivity, prompts, upstream, web_search
from agentgym_suite.envs.bfcl.agentic import AgenticTask, default_memory_dir
from agentgym_suite.envs.bfcl.ast_match import oracle_arguments, placeholder_arguments
from agentgym_suite.envs.bfcl.backends import BackendSession, compare_states, contains_all, result_text
from agentgym_suite.envs.bfcl.call_strings import parse_call_string, prompting_call_list
from agentgym_suite.envs.bfcl.upstream_decode import (
    REFUSED_NAMES,
    NestedCall,
    decode_prompting_reply,
    executed_value,
    execution_calls,
    instance_name,
    name_error_text,
    names_rewritten,
)
from agentgym_suite.envs.bfcl.schema import to_openai_tool

logger = logging.getLogger(__name__)

TURN_DONE = "I have finished this request."
_RECORDED = {"status": "recorded", "note": "single-turn task: the call itself is scored; nothing was executed"}


def _user_text(messages: list[dict[str, Any]]) -> tuple[str, str]:
    system = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system")
    return system, user


def _tool_call_block(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"


def _words(command: Any) -> ParsedMessage:
    """A prompting reply bfcl-eval's decoder does not read as calls: the model's words, with no call in them
    (a ``<tool_call>`` block or an OpenAI ``tool_calls`` message included, which its prompting decoder fails on)."""
    if isinstance(command, str):
        return ParsedMessage(command.strip())
    return parse_tool_calls(command)  # not text: the shared parser's error, as in every style


def _shown(text: str) -> str:
    """A result text as the model reads it: bfcl-eval's text, cut at the suite's tool-result limit."""
    if len(text) <= MAX_TOOL_RESULT_CHARS:
        return text
    return text[:MAX_TOOL_RESULT_CHARS] + f"... [truncated {len(text) - MAX_TOOL_RESULT_CHARS} characters]"


def _call_key(name: str, arguments: dict[str, Any]) -> str:
    """A call as canonical JSON, so a call from a message and a ground-truth call compare equal."""
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)


def _tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [to_openai_tool(prompts.with_language_hint(d)) for d in docs]


def _single_turn_tools(docs: list[dict[str, Any]], category: str, underscore_to_dot: bool = True) -> list[dict[str, Any]]:
    """Tools of a single-turn entry as bfcl-eval's handlers send them: its language-specific docs
    (Java and JavaScript parameters as strings), ``.`` in names replaced by ``_`` when the emulated
    model config has ``underscore_to_dot``."""
    tools = []
    for doc in upstream.language_specific_docs(docs, data.UPSTREAM_NAMES[category]):
        tools.append(to_openai_tool(dict(doc, name=upstream.model_function_name(doc["name"], underscore_to_dot))))
    return tools


def _java_literal(value: Any, java_type: str, item_type: str = "") -> str:
    """A value as Java source text of ``java_type``, the form the Java category's checker converts from.

    bfcl-eval's converter reads a ``String`` element of an ``ArrayList`` without its quotes but one
    of an ``Array`` as it stands (``java_type_converter``: ``str(element)``), so array strings are
    written bare."""
    def element(v: Any) -> str:
        if isinstance(v, str) and item_type in ("", "String"):
            return v if java_type == "Array" and item_type == "String" else f'"{v}"'
        return _java_literal(v, item_type or "any")
    if java_type == "long":
        return f"{value}L"
    if java_type == "float":
        return f"{value}f"
    if java_type == "Array" and isinstance(value, list):
        return "new " + (item_type or "Object") + "[]{" + ", ".join(element(v) for v in value) + "}"
    if java_type == "ArrayList" and isinstance(value, list):
        return "new ArrayList<>(Arrays.asList(" + ", ".join(element(v) for v in value) + "))"
    if java_type == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{k}", {element(v) if not isinstance(v, str) else chr(34) + v + chr(34)});' for k, v in value.items())
        return "new HashMap<String, String>() {{ " + puts + " }}"
    return _source_literal(value)


def _source_literal(value: Any) -> str:
    """A value as Java or JavaScript source text, the form those categories' checker converts from."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_source_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_source_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


PYTHON_DECODE_DEPARTURE = (
    "python-format replies are decoded by bfcl-eval's own decoder, except replies holding arithmetic or a lambda, "
    "which it evaluates with eval: those are decoded by this suite's evaluator (arithmetic on literal numbers, "
    "strings, lists and tuples computed as eval would; on names or calls refused), so such a reply can fail here "
    "where bfcl-eval reads it")
"""Why a python call list may decode differently from bfcl-eval (it ``eval``s arithmetic and lambdas; model
output never reaches ``eval`` here)."""

SUITE_REFUSAL_DEPARTURE = (
    "multi-turn, web-search and memory: a call to a name that is no backend method and that Python resolves in "
    "bfcl-eval's executor (a builtin such as print or len, a name of its executor module), that its executor refuses "
    "(kill, exit...) or that is no dotted identifier got the suite's refusal as its result, where bfcl-eval's eval "
    "calls it or fails with a text of its own; the state and the verdict are the same, the text the model read differs")
"""Reported in play (``info["departure_in_play"]``, then ``summary.json``'s ``leaderboard_departures``) by an
episode in which such a call happened, in either style; every other unknown name gets bfcl-eval's NameError text."""

INSTANCE_NAME_DEPARTURE = (
    "multi-turn, web-search and memory: a method name followed by '(' inside a string argument was rewritten with "
    "the instance name bfcl-eval's executor gives it, as upstream rewrites its execution string, but with 'agentgym' "
    "where upstream puts the model's name, so the stored text differs from upstream's")
"""Reported in play by an episode whose call arguments held such a text (``echo(content='ls()')``)."""


class BFCLEnv(ToolEnv):
    """BFCL v4 tasks (data and backends from the ``bfcl-eval`` package).

    Args:
        category: multi-turn ``base`` (default), ``miss_func``, ``miss_param``, ``long_context``;
            single-turn ``simple`` (Python), ``simple_java``, ``simple_javascript``, ``multiple``, ``parallel``, ``parallel_multiple``,
            ``live_simple``, ``live_multiple``, ``live_parallel``, ``live_parallel_multiple``,
            ``irrelevance``, ``live_irrelevance``, ``live_relevance``; agentic
            ``web_search_base``, ``web_search_no_snippet`` (local corpus, not the live web),
            ``memory_kv``, ``memory_vector``, ``memory_rec_sum``.
        system_prompt: ``fc`` (default) or ``prompting``; see :mod:`.prompts`.
        underscore_to_dot: the emulated model config's ``underscore_to_dot``: True (the default with
            ``fc``: bfcl-eval's FC handlers for OpenAI-compatible servers) sends single-turn
            function names with ``.`` replaced by ``_`` and accepts only that form; False (the
            default with ``prompting``, as bfcl-eval's prompting handlers, and ``QwenFCHandler``'s
            setting) sends and accepts the names as they are.
        memory_dir: folder of the memory snapshots (memory categories). Default: a fresh
            temporary folder per env, removed at ``close()``; give a folder to keep the memory
            the agent wrote across envs, processes and resumed runs (one folder per model).
        web_corpus: JSONL file of ``{"href", "title", "body"}`` pages for the local web search;
            default: pages generated from the benchmark's cited hop sources (see :mod:`.web_search`).
        web_search_backend: ``local`` (offline corpus, the default; not comparable with the
            leaderboard), ``serpapi`` (bfcl-eval's own live search, needs ``SERPAPI_API_KEY``) or
            ``package.module:ClassName``; default from ``$AGENTGYM_BFCL_WEB_SEARCH``.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    ``info`` adds ``bfcl_category`` and, for multi-turn, ``bfcl_turn`` (index of the current
    user turn) and ``bfcl_turn_checks`` (one dict per finished turn: passed, reason);
    single-turn and agentic episodes add ``bfcl_check`` at the end. Memory episodes render
    their own prompts (``prompt_messages``: each conversation starts a fresh context) and
    report ``bfcl_memory_phase`` and ``bfcl_memory_prereqs_left``; the first question of a
    scenario holds its prerequisite conversations first, so give memory runs a turn limit of
    several hundred steps (``agentgym eval --max-turns 600``).

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``bfcl_category``: str: the test category of the task.
        ``bfcl_turn``: int, multi-turn: index of the current user turn.
        ``bfcl_turn_checks``: list[dict], multi-turn: the result of each finished turn's check.
        ``bfcl_check``: dict, single-turn and agentic, when the episode ended: whether the calls or the final reply passed the check and why.
        ``bfcl_memory_phase``: str, memory: 'prereq' while the scenario's memory-writing conversations are held, then 'question'.
        ``bfcl_memory_prereqs_left``: int, memory: memory-writing conversations still to hold, the current one included.
    """

    benchmark: ClassVar[str] = "bfcl"
    info_keys: ClassVar[dict[str, str]] = {
        "bfcl_category": "str: the test category of the task.",
        "bfcl_turn": "int, multi-turn: index of the current user turn.",
        "bfcl_turn_checks": "list[dict], multi-turn: the result of each finished turn's check.",
        "bfcl_check": "dict, single-turn and agentic, when the episode ended: whether the calls or the final reply passed the check and why.",
        "bfcl_memory_phase": "str, memory: 'prereq' while the scenario's memory-writing conversations are held, then 'question'.",
        "bfcl_memory_prereqs_left": "int, memory: memory-writing conversations still to hold, the current one included.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    eval_sampling_defaults: ClassVar[dict[str, Any]] = {"temperature": 0.001, "max_new_tokens": 4096}
    """bfcl-eval's sampling: ``--temperature`` defaults to 0.001 (``bfcl_eval/__main__.py``,
    ``_llm_response_generation.py``); its local-model handlers ask for at most 4096 new tokens
    per step (``base_oss_handler._query_prompting``: ``min(4096, context left)``)."""

    @classmethod
    def sweeps(cls) -> list[Any]:
        """``--sweep categories:all|A,B``: one run per category, then the BFCL-v4 overall score."""
        return ["agentgym_suite.envs.bfcl.sweep:categories_sweep"]

    def __init__(self, *, category: str = "base", system_prompt: str = "fc", memory_dir: str | Path | None = None,
                 web_corpus: str | None = None, web_search_backend: str | None = None,
                 underscore_to_dot: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.web_search_backend = web_search.backend_name(web_search_backend)
        self.category = data.check_category(category)
        self.system_prompt = prompts.check_style(system_prompt)
        self.underscore_to_dot = self.system_prompt == "fc" if underscore_to_dot is None else bool(underscore_to_dot)
        data.package_root()  # fail early with the install command
        if self.category in data.MEMORY:
            from agentgym_suite.envs.bfcl import memory

            memory.memory_class(self.category)  # fail early with what to install
        self.web_corpus = web_corpus
        self._own_memory_dir = memory_dir is None
        self._memory_dir: Path | None = Path(memory_dir) if memory_dir is not None else None
        self._agentic: AgenticTask | None = None
        self._context_start = 0
        self._raw_actions: dict[int, str] = {}
        self._entry: dict[str, Any] = {}
        self._answer: Any = None
        self._calls: list[ToolCall] = []
        self._decoded_output: list[dict[str, Any]] | None = None
        """bfcl-eval's decoded output of a single-turn prompting reply (what its checker receives)."""
        self._execution_values: dict[str, dict[str, Any]] = {}
        """Multi-turn prompting: each decoded call's arguments as bfcl-eval's executor runs them (tuples kept,
        nested calls to run first), by call id (:meth:`execution_arguments`)."""
        self._check: dict[str, Any] | None = None
        self._in_play: set[str] = set()
        """Departures that happened in this episode (:data:`SUITE_REFUSAL_DEPARTURE`, :data:`INSTANCE_NAME_DEPARTURE`)."""
        self._turn_index = 0
        self._turn_checks: list[dict[str, Any]] = []
        self._all_results: list[str] = []
        """Every executed call's result text as bfcl-eval's executor writes it (multi-turn and agentic)."""
        self._turn_call_count = 0
        self._steps_in_turn = 0
        """Messages with calls in the current user turn (bfcl-eval's step count)."""
        self._forced_quit = False
        self._turn_calls: list[str] = []
        """Calls the backend ran this turn (canonical JSON of name and arguments), errors included."""
        self._model: BackendSession | None = None
        self._truth: BackendSession | None = None
        self._docs: list[dict[str, Any]] = []
        self._holdout: dict[str, list[dict[str, Any]]] = {}

    def leaderboard_departures(self) -> list[str]:
        """Web search off bfcl-eval's live backend (see :mod:`.web_search`), and python call lists
        read without ``eval`` (``format_sensitivity`` and the ``prompting`` style; see
        :mod:`.prompting_decoder`). Departures that depend on what the model does are reported by
        the episode in which they happen (``info["departure_in_play"]``: :data:`SUITE_REFUSAL_DEPARTURE`,
        :data:`INSTANCE_NAME_DEPARTURE`)."""
        reasons = []
        if self.category in data.WEB_SEARCH:
            reason = web_search.departure(self.web_search_backend, self.web_corpus)
            reasons += [reason] if reason else []
        if self.category == data.FORMAT_SENSITIVITY or self.system_prompt == "prompting":
            reasons.append(PYTHON_DECODE_DEPARTURE)
        return reasons

    # ------------------------------------------------------------------ task set
    def task_ids(self) -> list[str]:
        """BFCL ids of the category, in file order."""
        return list(data.load_questions(self.category))

    @property
    def multi_turn(self) -> bool:
        """True for the multi-turn categories."""
        return data.is_multi_turn(self.category)

    @property
    def agentic(self) -> bool:
        """True for the web-search and memory categories."""
        return data.is_agentic(self.category)

    @property
    def execution_free(self) -> bool:
        """True for the single-turn and agentic categories: the check reads the calls or the final
        reply, never the state the calls change."""
        return not self.multi_turn

    @property
    def memory_dir(self) -> Path:
        """The folder of this env's memory snapshots (created on first use)."""
        if self._memory_dir is None:
            self._memory_dir = default_memory_dir()
        return self._memory_dir

    def close(self) -> None:
        """Remove the env's own temporary memory folder (a folder given as ``memory_dir`` stays)."""
        if self._own_memory_dir and self._memory_dir is not None:
            shutil.rmtree(self._memory_dir, ignore_errors=True)
            self._memory_dir = None
        super().close()

    def _copied(self, memo: dict[int, Any]) -> None:
        """A copy gets its own copy of the env's temporary memory folder (the original's ``close`` removes it)."""
        super()._copied(memo)
        if self._own_memory_dir and self._memory_dir is not None:
            own = default_memory_dir()
            shutil.copytree(self._memory_dir, own, dirs_exist_ok=True)
            self._memory_dir = own

    # ------------------------------------------------------------------ conversation
    def _start_conversation(self, task_id: str) -> Conversation:
        self._entry = data.load_questions(self.category)[task_id]
        self._answer = data.load_answers(self.category).get(task_id)
        self._calls, self._check, self._agentic, self._raw_actions = [], None, None, {}
        self._decoded_output, self._execution_values, self._all_results = None, {}, []
        self._in_play = set()
        if self.multi_turn:
            return self._start_multi_turn()
        if self.agentic:
            return self._start_agentic(task_id)
        names_mapped = self.category == data.FORMAT_SENSITIVITY or self.underscore_to_dot
        handlers = {upstream.model_function_name(doc["name"], names_mapped): self._record for doc in self._entry["function"]}
        system, user = _user_text(self._entry["question"][0])
        if self.category == data.FORMAT_SENSITIVITY:  # the entry's docs already carry bfcl-eval's hint
            tools = [to_openai_tool(dict(d, name=upstream.model_function_name(d["name"]))) for d in self._entry["function"]]
            system = prompts.join_system(format_sensitivity.system_prompt(task_id, self._entry["function"]), system)
            return Conversation(task=user, tools=tools, handlers=handlers, first_user_message=user, system_prompt=system)
        tools = _single_turn_tools(self._entry["function"], self.category, self.underscore_to_dot)
        docs = [dict(d, name=upstream.model_function_name(d["name"], self.underscore_to_dot))
                for d in upstream.language_specific_docs(self._entry["function"], data.UPSTREAM_NAMES[self.category])]
        return Conversation(task=user, tools=tools, handlers=handlers, first_user_message=user,
                            system_prompt=self._system(docs, system, hinted=True))

    def _system(self, docs: list[dict[str, Any]], entry_system: str, hinted: bool = False) -> str:
        """The system message: the entry's own, after bfcl-eval's default prompt in ``prompting`` style
        (``docs`` already carry bfcl-eval's language hint and type texts when ``hinted``)."""
        if self.system_prompt == "prompting":
            shown = docs if hinted else [prompts.with_language_hint(d) for d in docs]
            return prompts.join_system(prompts.default_system_prompt(shown), entry_system)
        return entry_system

    def _start_agentic(self, task_id: str) -> Conversation:
        memory_dir = self.memory_dir if self.category in data.MEMORY else None
        task = AgenticTask(self.category, task_id, self.system_prompt, memory_dir=memory_dir, web_corpus=self.web_corpus,
                           web_backend=self.web_search_backend)
        self._agentic = task
        system, user = task.begin()
        self._context_start = 1 if system else 0
        limit = getattr(self.spec, "max_episode_steps", None)
        if task.is_memory and limit is not None and task.turn_budget() > limit:
            logger.warning("BFCL %s: %s holds %d user turns (its scenario's memory is written first) but the turn "
                           "limit is %d; raise it (agentgym eval --max-turns 600).", self.category, task_id,
                           task.turn_budget(), limit)
        handlers = {d["name"]: self._agentic_dispatcher(d["name"]) for d in task.docs}
        return Conversation(task=task.question_text, tools=_tools(task.docs), handlers=handlers, system_prompt=system,
                            first_user_message=user)

    def _agentic_dispatcher(self, name: str) -> Any:
        def handler(**arguments: Any) -> Any:
            assert self._agentic is not None and self._agentic.session is not None
            return self._agentic.session.call(name, arguments)[0]
        handler.__name__ = name
        return handler

    def _start_multi_turn(self) -> Conversation:
        entry = self._entry
        excluded = set(entry.get("excluded_function", []))
        docs = [d for cls in entry["involved_classes"] for d in data.load_func_docs(cls) if d["name"] not in excluded]
        held = {name for names in entry.get("missed_function", {}).values() for name in names}
        self._holdout = {
            turn: [d for d in docs if d["name"] in names] for turn, names in entry.get("missed_function", {}).items()
        }
        self._docs = [d for d in docs if d["name"] not in held]
        long_context = self.category == "long_context"
        # bfcl-eval executes any public method of the involved backends, offered or not (a held-out
        # function the ground truth itself calls early, an excluded one): both sessions allow them all
        self._model = BackendSession(entry["involved_classes"], entry["initial_config"], (), long_context=long_context)
        self._truth = BackendSession(entry["involved_classes"], entry["initial_config"], (), long_context=long_context)
        for session in (self._model, self._truth):
            session.allowed = set(session.owner)
        self._turn_index, self._turn_checks, self._all_results = 0, [], []
        self._turn_call_count, self._turn_calls = 0, []
        self._steps_in_turn, self._forced_quit = 0, False
        system, user = _user_text(entry["question"][0])
        return Conversation(
            task=user, tools=_tools(self._docs), handlers=self._multi_turn_handlers(),
            system_prompt=self._system(self._docs, system), first_user_message=user,
        )

    def _multi_turn_handlers(self) -> dict[str, Any]:
        return {d["name"]: self._dispatcher(d["name"]) for d in self._docs}

    def _dispatcher(self, name: str) -> Any:
        def handler(**arguments: Any) -> Any:
            return self._call_model_backend(name, arguments)[0]
        handler.__name__ = name
        return handler

    def _call_model_backend(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        """Run one multi-turn call on the model's backends and count it: (raw result, bfcl-eval's result text)."""
        assert self._model is not None
        result, text = self._model.call(name, arguments)
        self._all_results.append(text)
        self._turn_call_count += 1
        self._turn_calls.append(_call_key(name, arguments))
        return result, text

    def _record(self, **arguments: Any) -> dict[str, Any]:
        return dict(_RECORDED)

    # ------------------------------------------------------------------ turn logic
    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """As :class:`ToolEnv`, except that a single-turn entry ends after its one response whatever it
        holds: bfcl-eval scores the one response it gets, so a refused reply (too long, no visible
        text) fails the entry instead of earning a second turn."""
        observation, reward, terminated, truncated, info = super().step(action)
        if terminated or truncated or info.get("action_valid", True) or not self._entry or self.multi_turn or self.agentic:
            return observation, reward, terminated, truncated, info
        outcome = self._finish(observation, valid=False)
        self._finished, self._score, self._won = True, float(outcome.score), bool(outcome.won)
        info = {**info, **outcome.extra, "won": self._won, "score": self._score}
        return observation, float(outcome.reward), True, False, info

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        self._raw_actions[len(self.messages)] = command
        if self.category == data.FORMAT_SENSITIVITY:
            decoded = format_sensitivity.decode(str(self.task_id), command)
            if decoded:  # the checker gets the decoder's values (tuples kept); the transcript gets JSON calls
                self._decoded_output = [{name: arguments} for name, arguments in decoded]
                command = "\n".join(_tool_call_block(upstream.model_function_name(n), a) for n, a in decoded)
            elif "<tool_call>" in command:  # not the format the prompt asked for: read as a plain reply
                command = command.replace("<tool_call>", "<tool-call>")
        return super()._execute(command, parsed)

    def _parse_message(self, command: str) -> ParsedMessage:
        """In ``prompting`` style, only what bfcl-eval's own decoder for the entry's language reads is a call
        (:mod:`.upstream_decode`): a call list ``[f(a=1)]``. Anything else, ``<tool_call>`` blocks and
        OpenAI-style ``tool_calls`` included, is the model's words, as bfcl-eval takes a reply its decoder
        fails on (a single-turn entry fails, a multi-turn turn ends). Function names stay as the model wrote
        them: the checker compares them as the emulated model config does (``underscore_to_dot``).
        Other styles read ``<tool_call>`` blocks and ``tool_calls`` as usual."""
        if self.system_prompt == "prompting" and self.category != data.FORMAT_SENSITIVITY:
            decoded = decode_prompting_reply(command, self._language)
            if decoded is None:
                return _words(command)
            if not self.multi_turn and not self.agentic:  # the one response a single-turn entry gets
                self._decoded_output = decoded.output
            items = decoded.calls
            if self.multi_turn or self.agentic:  # executed as bfcl-eval's executor runs its execution strings
                executed = execution_calls(decoded)
                if executed is None:  # its conversion fails: the reply is the model's words
                    return _words(command)
                items = [call for call, _ in executed]
                self._execution_values = {call.id: values for call, values in executed
                                          if isinstance(call, ToolCall) and values is not None}
            message = ParsedMessage("")
            for item in items:
                if isinstance(item, ToolCallError):
                    message.errors.append(item)
                else:
                    message.calls.append(item)
            return message
        return parse_tool_calls(command)

    @property
    def _language(self) -> str:
        """The language of the entry's functions (python, java, javascript), as bfcl-eval's decoder takes it."""
        if self.multi_turn or self.agentic:
            return "python"
        return str(upstream.language_of(data.UPSTREAM_NAMES[self.category]).value)

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        if self._agentic is not None:
            verdict = self._agentic.after_calls()
            if verdict == "next":
                self._start_next_context(self._agentic.cut_conversation())
            return verdict == "quit"
        if self.multi_turn:
            return self._count_step()
        self._calls = list(calls)
        return True

    def execution_arguments(self, call: ToolCall) -> dict[str, Any]:
        """The arguments ``call`` runs with on the backend: a multi-turn prompting call's as bfcl-eval's
        executor passes them (tuples kept, dict keys as strings, each nested call with keyword arguments
        run first through the backend and replaced by its result, as its ``eval`` of the execution string
        does; see :func:`~agentgym_suite.envs.bfcl.upstream_decode.execution_value`), else the call's
        own JSON arguments as bfcl-eval's FC handlers write them into the execution string
        (``convert_to_function_call``: ``name(k=repr(v))``), which the same executor runs. In both, method
        names followed by ``(`` inside strings and dict keys get the instance name, as its rewrite of the
        whole string does. Raises what a nested call raises (a name that is no backend method:
        ``NameError`` in upstream's words), which fails the outer call."""
        values = self._execution_values.pop(call.id, None)
        if values is None:
            values = call.arguments
        session, entry_id = self._executing_session()
        instances = {method: instance_name(entry_id, owner) for method, owner in session.owner.items()}
        if names_rewritten(values, instances):
            self._in_play.add(INSTANCE_NAME_DEPARTURE)
        return {key: executed_value(value, instances, self._run_nested) for key, value in values.items()}

    def _executing_session(self) -> tuple[BackendSession, str]:
        """The backends the model's calls run on and the entry id bfcl-eval's executor names their instances
        after: the multi-turn model session and its entry, or the agentic conversation's backend and that
        conversation's id (a memory prerequisite conversation has an id of its own)."""
        if self._agentic is not None and self._agentic.session is not None and self._agentic.current is not None:
            return self._agentic.session, self._agentic.current.test_id
        assert self._model is not None, "no backend session: the episode has not started or has no backends"
        return self._model, str(self._entry.get("id", self.task_id))

    def _run_nested(self, call: NestedCall) -> Any:
        """A nested call run on the model's backend (its arguments already done); a name that is no backend
        method raises Python's NameError, as upstream's ``eval`` does."""
        session, _ = self._executing_session()
        if call.name not in session.owner:
            raise NameError(f"name {call.name.split('.')[0]!r} is not defined")
        return session.method(call.name)(**call.arguments)

    def _run_agentic_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """One call of a web-search or memory conversation, run as bfcl-eval's executor runs it: straight on
        the backend's method whatever the arguments (no schema check; the backend's or Python's error is the
        result), with the execution-string arguments of a prompting reply (:meth:`execution_arguments`). The
        model reads bfcl-eval's result text (strings as they are, dicts as JSON, anything else ``str``)."""
        session, _ = self._executing_session()
        try:
            result = session.method(call.name)(**self.execution_arguments(call))
        except Exception as exc:  # noqa: BLE001 - upstream's eval turns any error into this result text
            result = {"error": f"Error during execution: {exc}"}
            text = result["error"]
        else:
            text = result_text(result)
        self._all_results.append(text)
        ok = not (isinstance(result, dict) and set(result) == {"error"})
        self.tool_log.append(ToolRecord(call.name, call.arguments, result, ok, self.turn))
        return call.name, _shown(text), "ok" if ok else "error"

    def _run_on_backend(self, call: ToolCall) -> tuple[str, Any, str]:
        try:
            arguments = self.execution_arguments(call)
        except Exception as exc:  # noqa: BLE001 - a nested call's error fails the outer call, as upstream's eval does
            text = f"Error during execution: {exc}"
            self._all_results.append(text)
            self._turn_call_count += 1
            self._turn_calls.append(_call_key(call.name, call.arguments))
            self.tool_log.append(ToolRecord(call.name, call.arguments, {"error": text}, False, self.turn))
            return call.name, text, "error"
        result, text = self._call_model_backend(call.name, arguments)
        ok = not (isinstance(result, dict) and set(result) == {"error"})
        self.tool_log.append(ToolRecord(call.name, call.arguments, result, ok, self.turn))
        return call.name, _shown(text), "ok" if ok else "error"

    def _count_step(self) -> bool:
        """Count a message of calls against bfcl-eval's limit of steps in one user turn.

        Past the limit bfcl-eval force-quits the entry: the turns after it are never played,
        so the entry fails; on the last turn the turn is still checked (its answers are all
        there), as bfcl-eval's checker does. Returns True when the episode ends here.
        """
        self._steps_in_turn += 1
        if self._steps_in_turn <= prompts.max_steps_per_turn():
            return False
        self._forced_quit = True
        if self._turn_index == len(self._entry["question"]) - 1:
            self._close_turn()
        else:
            self._turn_checks.append({"turn": self._turn_index, "passed": False,
                                      "reason": f"forced to quit after {prompts.max_steps_per_turn()} steps in one turn"})
        return True

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """As :class:`ToolEnv`, except in multi-turn, where bfcl-eval executes every decoded call:
        a call to any public method of the involved backends runs whatever its arguments and
        whether or not it is offered this turn (the backend's error is the result when the
        arguments are wrong), and a call to an unknown name is refused but still counts as a
        call of the turn, with its error as result: bfcl-eval's ``NameError`` text when Python would
        resolve the name to nothing there (:func:`~.upstream_decode.name_error_text`), else the suite's
        refusal. In web-search and memory conversations the same: every backend method runs whatever its
        arguments (:meth:`_run_agentic_call`)."""
        if self.multi_turn and self._model is not None and call.name in self._model.owner and \
                call.name not in REFUSED_NAMES:
            return self._run_on_backend(call)
        session = self._agentic.session if self._agentic is not None else None
        if session is not None and call.name in session.owner and call.name not in REFUSED_NAMES:
            return self._run_agentic_call(call)
        unknown = name_error_text(call.name) if self.multi_turn or session is not None else None
        if unknown is not None:  # no backend method, nothing Python resolves: upstream's NameError text
            self.tool_log.append(ToolRecord(call.name, call.arguments, {"error": unknown}, False, self.turn))
            self._all_results.append(unknown)
            if self.multi_turn:
                self._turn_call_count += 1
                self._turn_calls.append(_call_key(call.name, call.arguments))
            return call.name, unknown, "invalid"
        counted = self._turn_call_count
        if self.multi_turn or session is not None:  # upstream's eval would call it or fail in its own words
            self._in_play.add(SUITE_REFUSAL_DEPARTURE)
        name, result, status = super().execute_call(call)
        if self.multi_turn and self._turn_call_count == counted:  # the backend never saw it
            self._turn_call_count += 1
            self._turn_calls.append(_call_key(call.name, call.arguments))
            self._all_results.append(f"Error during execution: {result}")
        elif session is not None:  # a name that is no backend method: refused, still one result
            self._all_results.append(f"Error during execution: {result}")
        return name, result, status

    def _start_next_context(self, user: str | None) -> None:
        """A new conversation of a memory episode: the next prompt shows only it (fresh context)."""
        self._context_start = len(self.messages)
        if user is not None and self.messages and self.messages[-1].get("role") == "tool":
            self.messages.append({"role": "user", "content": user})

    def _user_reply(self, assistant_text: str) -> str | None:
        if self._agentic is not None:
            reply, new_context = self._agentic.text_reply(assistant_text)
            if new_context:
                self._context_start = len(self.messages)
            return reply
        if not self.multi_turn:
            return None
        self._close_turn()
        questions = self._entry["question"]
        self._turn_index += 1
        self._turn_call_count, self._turn_calls, self._steps_in_turn = 0, [], 0
        if self._turn_index >= len(questions):
            return None
        key = str(self._turn_index)
        if key in self._holdout:
            self._docs = self._docs + self._holdout[key]
            self._set_tools(_tools(self._docs), self._multi_turn_handlers())
            if not questions[self._turn_index]:
                return prompts.more_functions_message(self.system_prompt, self._holdout[key])
        return _user_text(questions[self._turn_index])[1] or prompts.more_functions_message(self.system_prompt, [])

    def _close_turn(self) -> None:
        """Run this turn's ground truth on the reference backends and compare."""
        assert self._model is not None and self._truth is not None
        truth_calls = self._answer[self._turn_index] if self._answer and self._turn_index < len(self._answer) else []
        truth_results = [self._truth.call_string(c)[1] for c in truth_calls]
        check: dict[str, Any] = {"turn": self._turn_index, "passed": True, "reason": ""}
        if truth_calls:
            diffs = compare_states(self._model, self._truth)
            missing = contains_all(self._all_results, truth_results)
            if self._turn_call_count == 0:
                check.update(passed=False, reason="no function was called in a turn that needs calls")
            elif diffs:
                check.update(passed=False, reason=f"backend state differs from the ground truth: {diffs}")
            elif missing:
                check.update(passed=False, reason=f"results missing compared with the ground truth: {missing[:3]}")
        self._turn_checks.append(check)

    def _evaluate(self) -> tuple[float, bool]:
        if self._agentic is not None:
            won, reason = self._agentic.evaluate()
            self._check = {"passed": won, "reason": reason}
            return float(won), won
        if self.multi_turn:
            done = len(self._turn_checks) == len(self._entry["question"])
            won = done and all(c["passed"] for c in self._turn_checks)
            return float(won), won
        won, reason = self._single_turn_result()
        self._check = {"passed": won, "reason": reason}
        return float(won), won

    def _single_turn_result(self) -> tuple[bool, str]:
        calls = [(c.name, c.arguments) for c in self._calls]
        if self.category in data.NO_CALL_EXPECTED or self.category in data.CALL_EXPECTED_ANY:
            made = bool(calls) if self._decoded_output is None else self._decoded_has_call()
            if self.category in data.NO_CALL_EXPECTED:
                return (not made, "no call made" if not made else "a function was called for an irrelevant request")
            return (made, "a call was made" if made else "no function was called")
        category = data.UPSTREAM_NAMES[self.category]
        if self.category == data.FORMAT_SENSITIVITY:  # bfcl-eval tells the checker the original id
            category = format_sensitivity.original_id(str(self.task_id))
        if self.category == data.FORMAT_SENSITIVITY:  # its decoder hands over names with dots replaced
            if self._decoded_output is not None:
                calls = [next(iter(item.items())) for item in self._decoded_output]
            verdict = upstream.check_calls(category, self._entry["function"],
                                           [(upstream.model_function_name(n), a) for n, a in calls], self._answer or [])
        else:  # a prompting reply: bfcl-eval's decoded output itself (tuples, source texts); else the calls as sent
            if self._decoded_output is not None:
                calls = [next(iter(item.items())) for item in self._decoded_output]
            verdict = upstream.check_calls(category, self._entry["function"], calls, self._answer or [],
                                           underscore_to_dot=self.underscore_to_dot)
        if verdict.get("valid"):
            return True, "all calls match"
        return False, f"{verdict.get('error_type', '')}: {verdict.get('error')}"

    def _decoded_has_call(self) -> bool:
        """Whether bfcl-eval's decoded output of a prompting reply holds a call, as its relevance rule reads it
        (``is_empty_output``): every decoded call counts, also one the suite cannot carry as JSON and shows the
        agent as an error (``f(**{...})``, ``f(x=1j)``, ``f()()``)."""
        from bfcl_eval.utils import is_empty_output

        return not is_empty_output(self._decoded_output)

    @classmethod
    def benchmark_metrics(cls, final_infos: Sequence[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        """For ``format_sensitivity``, bfcl-eval's report: accuracy per prompt configuration, their
        max delta, standard deviation and variance (see :mod:`.format_sensitivity`)."""
        pairs = [(str(i["bfcl_format_config"]), bool(i.get("won"))) for i in final_infos if "bfcl_format_config" in i]
        return {"format_sensitivity": format_sensitivity.sensitivity_report(pairs)} if pairs else {}

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"bfcl_category": self.category}
        if self.category == data.FORMAT_SENSITIVITY or self.system_prompt == "prompting":
            info["tools_in_prompt"] = False  # bfcl-eval's prompting handlers give the model no tool schemas
        if self._in_play:
            info["departure_in_play"] = "; ".join(d for d in (SUITE_REFUSAL_DEPARTURE, INSTANCE_NAME_DEPARTURE)
                                                  if d in self._in_play)
        if self.category == data.FORMAT_SENSITIVITY and self.task_id:
            info["bfcl_format_config"] = format_sensitivity.config_of(self.task_id)
        if self.multi_turn:
            info["bfcl_turn"] = self._turn_index
            info["bfcl_turn_checks"] = [dict(c) for c in self._turn_checks]
        elif self._check is not None:
            info["bfcl_check"] = dict(self._check)
        task = self._agentic
        if task is not None and task.is_memory:
            info["bfcl_memory_phase"] = task.phase
            info["bfcl_memory_prereqs_left"] = task.prereqs_left
            info["prompt_messages"] = self._context_messages()
        return info

    def _context_messages(self) -> list[dict[str, Any]]:
        """The current conversation of a memory episode as the next prompt (the model's raw text as
        its turns); earlier conversations are out of context, as in bfcl-eval."""
        assert self._agentic is not None
        out = [{"role": "system", "content": self._agentic.system}] if self._agentic.system else []
        for index in range(self._context_start, len(self.messages)):
            message = self.messages[index]
            if message.get("role") == "assistant" and index in self._raw_actions:
                out.append({"role": "assistant", "content": self._raw_actions[index]})
            elif message.get("role") != "system":
                out.append(dict(message))
        return out

    # ------------------------------------------------------------------ oracle
    def oracle(self) -> list[str]:
        """Ground-truth calls from the current state: one message per turn with its calls, then a
        text reply ending the turn.

        In the current turn, the gold calls already made (the longest run of them, in order,
        among the calls the backend ran this turn) are left out. Calls that match no gold call,
        such as a ``cd`` the file system refused, take nothing off the plan.

        Single-turn entries get their possible answer. Three of them lose with it, as on the
        leaderboard: bfcl-eval's Java converter cannot produce the answers of ``simple_java_36`` and
        ``_65`` (an ArrayList of ``any`` holding non-strings) and its checker compares ``_64``'s
        HashMap answer character by character (it passes an empty HashMap there; the oracle does not
        play that quirk). ``tests/conformance/test_bfcl_java_js.py`` shows both sides agree.
        """
        if not self._entry:
            return []
        if self._agentic is not None:
            return self._agentic.oracle(calls_made=bool(self.tool_log))
        if not self.multi_turn:
            if self.category in data.NO_CALL_EXPECTED:
                return ["None of the available functions can answer this request."]
            if self.category in data.CALL_EXPECTED_ANY:
                tool = _single_turn_tools(self._entry["function"][:1], self.category, self.underscore_to_dot)[0]["function"]
                return [self._calls_message([(tool["name"], placeholder_arguments(tool["parameters"]))])]
            if self.category == data.FORMAT_SENSITIVITY:
                calls = [(name, oracle_arguments(params, self._required(name))) for answer in self._answer
                         for name, params in answer.items()]
                return [format_sensitivity.render_calls(str(self.task_id), calls)]
            source_text = self._language != "python"
            calls = []
            for answer in self._answer:
                for name, params in answer.items():
                    arguments = oracle_arguments(params, self._required(name))
                    if source_text:
                        arguments = self._as_source_text(name, arguments)
                    calls.append((upstream.model_function_name(name, self.underscore_to_dot), arguments))
            return [self._calls_message(calls)]
        actions: list[str] = []
        for turn in range(self._turn_index, len(self._entry["question"])):
            calls = [self._oracle_call(c) for c in (self._answer[turn] if turn < len(self._answer) else [])]
            if turn == self._turn_index:
                calls = calls[self._gold_calls_made(calls):]
            if calls:
                actions.append(self._calls_message(calls))
            actions.append(TURN_DONE)
        return actions

    def _calls_message(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
        """One message holding ``calls`` in the env's style: a call list ``[f(a=1)]`` for the entry's language
        in ``prompting`` style (what bfcl-eval's prompting decoder reads), ``<tool_call>`` blocks otherwise."""
        if self.system_prompt == "prompting":
            return prompting_call_list(calls, self._language)
        return "\n".join(_tool_call_block(name, arguments) for name, arguments in calls)

    def _required(self, name: str) -> list[str]:
        doc = next((d for d in self._entry["function"] if d["name"] == name), {})
        return list((doc.get("parameters") or {}).get("required") or [])

    def _as_source_text(self, name: str, arguments: dict[str, Any]) -> dict[str, str]:
        """Oracle arguments of a Java or JavaScript entry as the source text a model would send."""
        doc = next((d for d in self._entry["function"] if d["name"] == name), {})
        props = (doc.get("parameters") or {}).get("properties") or {}
        out = {}
        for key, value in arguments.items():
            spec = props.get(key) or {}
            if self.category == "simple_java":
                out[key] = _java_literal(value, str(spec.get("type", "any")), str((spec.get("items") or {}).get("type", "")))
            else:
                out[key] = _source_literal(value)
        return out

    def _gold_calls_made(self, gold: list[tuple[str, dict[str, Any]]]) -> int:
        """How many of ``gold`` (a prefix) the backend has run this turn, in order, other calls between."""
        done = 0
        for key in self._turn_calls:
            if done < len(gold) and key == _call_key(*gold[done]):
                done += 1
        return done

    def _oracle_call(self, call_string: str) -> tuple[str, dict[str, Any]]:
        from agentgym_suite.envs.bfcl.call_strings import bind_arguments

        assert self._model is not None
        parsed = parse_call_string(call_string)
        try:
            kwargs = bind_arguments(parsed, self._model.method(parsed.name))
        except (KeyError, TypeError):
            kwargs = dict(parsed.kwargs)
        return parsed.name, kwargs

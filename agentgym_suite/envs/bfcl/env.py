"""``BFCLEnv``: the Berkeley Function Calling Leaderboard v4 as a tool env.

Single-turn categories end after the first assistant message and are scored by AST matching
against the possible answers (irrelevance categories: success when no call is made).
Multi-turn categories run the calls on BFCL's executable backends; after each user turn the
backend state and results are compared with a second set of backends that executed that
turn's ground truth; reward 1 only when every turn passes. The agentic categories (web
search on a local corpus, memory on bfcl-eval's memory backends; see :mod:`.agentic`) end
with a reply in words that must contain an expected answer.

Prompts are bfcl-eval's (see :mod:`.prompts`): with ``system_prompt="fc"`` (default) no system
text beyond the entry's own, as its function-calling handlers; with ``"prompting"`` its default
system prompt, and call lists ``[f(a=1)]`` are read as calls the way bfcl-eval's prompting handlers
decode them (:mod:`.prompting_decoder`; a call it cannot read is shown to the agent as an error).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome
from agentgym_suite.core.tool_calls import ParsedMessage, ToolCall, ToolCallError, parse_tool_calls
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.bfcl import data, prompts
from agentgym_suite.envs.bfcl.agentic import AgenticTask, default_memory_dir
from agentgym_suite.envs.bfcl.ast_match import match_calls, oracle_arguments, placeholder_arguments
from agentgym_suite.envs.bfcl.backends import BackendSession, compare_states, contains_all
from agentgym_suite.envs.bfcl.call_strings import parse_call_string
from agentgym_suite.envs.bfcl.prompting_decoder import decode_call_list
from agentgym_suite.envs.bfcl.schema import param_types, to_openai_tool

logger = logging.getLogger(__name__)

TURN_DONE = "I have finished this request."
_RECORDED = {"status": "recorded", "note": "single-turn task: the call itself is scored; nothing was executed"}


def _user_text(messages: list[dict[str, Any]]) -> tuple[str, str]:
    system = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system")
    return system, user


def _tool_call_block(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"


def _call_key(name: str, arguments: dict[str, Any]) -> str:
    """A call as canonical JSON, so a call from a message and a ground-truth call compare equal."""
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)


def _tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [to_openai_tool(prompts.with_language_hint(d)) for d in docs]


class BFCLEnv(ToolEnv):
    """BFCL v4 tasks (data and backends from the ``bfcl-eval`` package).

    Args:
        category: multi-turn ``base`` (default), ``miss_func``, ``miss_param``, ``long_context``;
            single-turn ``simple``, ``multiple``, ``parallel``, ``parallel_multiple``,
            ``live_simple``, ``live_multiple``, ``live_parallel``, ``live_parallel_multiple``,
            ``irrelevance``, ``live_irrelevance``, ``live_relevance``; agentic
            ``web_search_base``, ``web_search_no_snippet`` (local corpus, not the live web),
            ``memory_kv``, ``memory_vector``, ``memory_rec_sum``.
        system_prompt: ``fc`` (default) or ``prompting``; see :mod:`.prompts`.
        memory_dir: folder of the memory snapshots (memory categories). Default: a fresh
            temporary folder per env, removed at ``close()``; give a folder to keep the memory
            the agent wrote across envs, processes and resumed runs (one folder per model).
        web_corpus: JSONL file of ``{"href", "title", "body"}`` pages for web search; default:
            pages generated from the benchmark's cited hop sources (see :mod:`.web_search`).
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    ``info`` adds ``bfcl_category`` and, for multi-turn, ``bfcl_turn`` (index of the current
    user turn) and ``bfcl_turn_checks`` (one dict per finished turn: passed, reason);
    single-turn and agentic episodes add ``bfcl_check`` at the end. Memory episodes render
    their own prompts (``prompt_messages``: each conversation starts a fresh context) and
    report ``bfcl_memory_phase`` and ``bfcl_memory_prereqs_left``; the first question of a
    scenario holds its prerequisite conversations first, so give memory runs a turn limit of
    several hundred steps (``agentgym eval --max-turns 600``).
    """

    benchmark: ClassVar[str] = "bfcl"

    def __init__(self, *, category: str = "base", system_prompt: str = "fc", memory_dir: str | Path | None = None,
                 web_corpus: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.category = data.check_category(category)
        self.system_prompt = prompts.check_style(system_prompt)
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
        self._check: dict[str, Any] | None = None
        self._turn_index = 0
        self._turn_checks: list[dict[str, Any]] = []
        self._all_results: list[str] = []
        self._turn_call_count = 0
        self._turn_calls: list[str] = []
        """Calls the backend ran this turn (canonical JSON of name and arguments), errors included."""
        self._model: BackendSession | None = None
        self._truth: BackendSession | None = None
        self._docs: list[dict[str, Any]] = []
        self._holdout: dict[str, list[dict[str, Any]]] = {}

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
        if self.multi_turn:
            return self._start_multi_turn()
        if self.agentic:
            return self._start_agentic(task_id)
        tools = _tools(self._entry["function"])
        handlers = {doc["name"]: self._record for doc in self._entry["function"]}
        system, user = _user_text(self._entry["question"][0])
        return Conversation(task=user, tools=tools, handlers=handlers, first_user_message=user,
                            system_prompt=self._system(self._entry["function"], system))

    def _system(self, docs: list[dict[str, Any]], entry_system: str) -> str:
        """The system message: the entry's own, after bfcl-eval's default prompt in ``prompting`` style."""
        if self.system_prompt == "prompting":
            return prompts.join_system(prompts.default_system_prompt([prompts.with_language_hint(d) for d in docs]), entry_system)
        return entry_system

    def _start_agentic(self, task_id: str) -> Conversation:
        memory_dir = self.memory_dir if self.category in data.MEMORY else None
        task = AgenticTask(self.category, task_id, self.system_prompt, memory_dir=memory_dir, web_corpus=self.web_corpus)
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
        allowed = [d["name"] for d in docs]
        long_context = self.category == "long_context"
        self._model = BackendSession(entry["involved_classes"], entry["initial_config"], allowed, long_context=long_context)
        self._truth = BackendSession(entry["involved_classes"], entry["initial_config"], allowed, long_context=long_context)
        self._turn_index, self._turn_checks, self._all_results = 0, [], []
        self._turn_call_count, self._turn_calls = 0, []
        system, user = _user_text(entry["question"][0])
        return Conversation(
            task=user, tools=_tools(self._docs), handlers=self._multi_turn_handlers(),
            system_prompt=self._system(self._docs, system), first_user_message=user,
        )

    def _multi_turn_handlers(self) -> dict[str, Any]:
        return {d["name"]: self._dispatcher(d["name"]) for d in self._docs}

    def _dispatcher(self, name: str) -> Any:
        def handler(**arguments: Any) -> Any:
            assert self._model is not None
            result, text = self._model.call(name, arguments)
            self._all_results.append(text)
            self._turn_call_count += 1
            self._turn_calls.append(_call_key(name, arguments))
            return result
        handler.__name__ = name
        return handler

    def _record(self, **arguments: Any) -> dict[str, Any]:
        return dict(_RECORDED)

    # ------------------------------------------------------------------ turn logic
    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        self._raw_actions[len(self.messages)] = command
        return super()._execute(command, parsed)

    def _parse_message(self, command: str) -> ParsedMessage:
        """In ``prompting`` style, a call list ``[f(a=1)]`` is read as bfcl-eval's prompting handlers
        read it (:mod:`.prompting_decoder`); ``<tool_call>`` blocks and other text as usual."""
        if self.system_prompt == "prompting" and "<tool_call>" not in command:
            decoded = decode_call_list(command)
            if decoded:
                message = ParsedMessage("")
                for item in decoded:
                    (message.errors if isinstance(item, ToolCallError) else message.calls).append(item)  # type: ignore[arg-type]
                return message
        return parse_tool_calls(command)

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        if self._agentic is not None:
            verdict = self._agentic.after_calls()
            if verdict == "next":
                self._start_next_context(self._agentic.cut_conversation())
            return verdict == "quit"
        if self.multi_turn:
            return False
        self._calls = list(calls)
        return True

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
        self._turn_call_count, self._turn_calls = 0, []
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
        if self.category in data.NO_CALL_EXPECTED:
            return (not calls, "no call made" if not calls else "a function was called for an irrelevant request")
        if self.category in data.CALL_EXPECTED_ANY:
            return (bool(calls), "a call was made" if calls else "no function was called")
        docs = {d["name"]: param_types(d) for d in self._entry["function"]}
        return match_calls(calls, self._answer or [], docs)

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"bfcl_category": self.category}
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
        """
        if not self._entry:
            return []
        if self._agentic is not None:
            return self._agentic.oracle(calls_made=bool(self.tool_log))
        if not self.multi_turn:
            if self.category in data.NO_CALL_EXPECTED:
                return ["None of the available functions can answer this request."]
            if self.category in data.CALL_EXPECTED_ANY:
                tool = to_openai_tool(self._entry["function"][0])["function"]
                return [_tool_call_block(tool["name"], placeholder_arguments(tool["parameters"]))]
            blocks = [_tool_call_block(name, oracle_arguments(params)) for answer in self._answer for name, params in answer.items()]
            return ["\n".join(blocks)]
        actions: list[str] = []
        for turn in range(self._turn_index, len(self._entry["question"])):
            calls = [self._oracle_call(c) for c in (self._answer[turn] if turn < len(self._answer) else [])]
            if turn == self._turn_index:
                calls = calls[self._gold_calls_made(calls):]
            if calls:
                actions.append("\n".join(_tool_call_block(name, kwargs) for name, kwargs in calls))
            actions.append(TURN_DONE)
        return actions

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

"""``BFCLEnv``: the Berkeley Function Calling Leaderboard v4 as a tool env.

Single-turn categories end after the first assistant message and are scored by AST matching
against the possible answers (irrelevance categories: success when no call is made).
Multi-turn categories run the calls on BFCL's executable backends; after each user turn the
backend state and results are compared with a second set of backends that executed that
turn's ground truth; reward 1 only when every turn passes.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agentgym_suite.core.tool_calls import ToolCall
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.bfcl import data
from agentgym_suite.envs.bfcl.ast_match import match_calls, oracle_arguments, placeholder_arguments
from agentgym_suite.envs.bfcl.backends import BackendSession, compare_states, contains_all
from agentgym_suite.envs.bfcl.call_strings import parse_call_string
from agentgym_suite.envs.bfcl.schema import param_types, to_openai_tool

MULTI_TURN_SYSTEM = (
    "You can call the functions listed in the tools to complete the user's requests. At each turn, "
    "keep calling functions until the request is fulfilled, then reply to the user in plain text; "
    "the next request follows your text reply."
)
SINGLE_TURN_SYSTEM = (
    "Answer the request by calling the right function(s) with the right arguments in one message. "
    "If none of the functions fits the request, say so in plain text and call nothing."
)
HOLDOUT_MESSAGE = "More functions are now available in your tool list. Please continue with my previous request."
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


class BFCLEnv(ToolEnv):
    """BFCL v4 tasks (data and backends from the ``bfcl-eval`` package).

    Args:
        category: multi-turn ``base`` (default), ``miss_func``, ``miss_param``, ``long_context``;
            single-turn ``simple``, ``multiple``, ``parallel``, ``parallel_multiple``,
            ``live_simple``, ``live_multiple``, ``live_parallel``, ``live_parallel_multiple``,
            ``irrelevance``, ``live_irrelevance``, ``live_relevance``. ``web_search`` and
            ``memory*`` are refused: they need the network or a hub model.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    ``info`` adds ``bfcl_category`` and, for multi-turn, ``bfcl_turn`` (index of the current
    user turn) and ``bfcl_turn_checks`` (one dict per finished turn: passed, reason);
    single-turn episodes add ``bfcl_check`` at the end.
    """

    benchmark: ClassVar[str] = "bfcl"

    def __init__(self, *, category: str = "base", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.category = data.check_category(category)
        data.package_root()  # fail early with the install command
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
    def execution_free(self) -> bool:
        """True for the single-turn categories: the calls themselves are matched, nothing runs."""
        return not self.multi_turn

    # ------------------------------------------------------------------ conversation
    def _start_conversation(self, task_id: str) -> Conversation:
        self._entry = data.load_questions(self.category)[task_id]
        self._answer = data.load_answers(self.category).get(task_id)
        self._calls, self._check = [], None
        if self.multi_turn:
            return self._start_multi_turn()
        tools = [to_openai_tool(doc) for doc in self._entry["function"]]
        handlers = {doc["name"]: self._record for doc in self._entry["function"]}
        system, user = _user_text(self._entry["question"][0])
        system = (system + "\n\n" + SINGLE_TURN_SYSTEM).strip()
        return Conversation(task=user, tools=tools, handlers=handlers, system_prompt=system, first_user_message=user)

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
        _, user = _user_text(entry["question"][0])
        return Conversation(
            task=user, tools=[to_openai_tool(d) for d in self._docs], handlers=self._multi_turn_handlers(),
            system_prompt=MULTI_TURN_SYSTEM, first_user_message=user,
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
    def _after_calls(self, calls: list[ToolCall]) -> bool:
        if self.multi_turn:
            return False
        self._calls = list(calls)
        return True

    def _user_reply(self, assistant_text: str) -> str | None:
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
            self._set_tools([to_openai_tool(d) for d in self._docs], self._multi_turn_handlers())
            if not questions[self._turn_index]:
                return HOLDOUT_MESSAGE
        return _user_text(questions[self._turn_index])[1] or HOLDOUT_MESSAGE

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
        return info

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

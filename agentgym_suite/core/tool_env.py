"""``ToolEnv``: the base of every tool-calling env (BFCL, tau2, VitaBench, FinMCP, synthetic).

The action is an assistant message; tool calls in it are parsed with
:func:`~agentgym_suite.core.tool_calls.parse_tool_calls`, checked against the allow-list of
tools and their JSON schemas, and dispatched to Python callables the env registered by name
(never ``eval``/``exec``). The observation is the tool results (``<tool_response>`` blocks)
or, when the message had no tool call, the user's next message. A message with neither a
tool call nor a visible character (empty OpenAI content, NUL bytes) is an invalid action that
leaves the conversation as it was. ``info["messages"]`` holds the conversation in OpenAI chat
format and ``info["tools"]`` the tool schemas.

A subclass implements :meth:`ToolEnv.task_ids`, :meth:`ToolEnv.oracle`,
:meth:`ToolEnv._start_conversation` (tools, handlers, system prompt, first user message),
:meth:`ToolEnv._user_reply` (the user's answer to a text reply, ``None`` to end) and
:meth:`ToolEnv._evaluate` (score and success at the end).

Public hooks for envs that wrap a tool env (the rehearsal env, fidelity checks); each has a
default, and a subclass overrides the ones its benchmark has data for:

* :meth:`ToolEnv.recorded_examples` - real (name, arguments, result) examples of the task;
* :meth:`ToolEnv.training_tasks` / :meth:`ToolEnv.evaluation_tasks` - the tasks whose real
  executions may ground a world model, and the tasks an evaluation plays (never the same);
* :attr:`ToolEnv.execution_free` - the success check reads only the calls made;
* :meth:`ToolEnv.rehearsed_score` - that check recomputed from calls no handler ran;
* :meth:`ToolEnv.success_criteria` - the data's own success criteria, in words;
* :meth:`ToolEnv.checklists` - per-turn checklists of the task (EnvACE's training reward);
* :attr:`ToolEnv.tool_index` - the tools offered now, by name;
* :attr:`ToolEnv.call_runner` - replaces validation and execution of each call;
* :attr:`ToolEnv.error_runner` - answers each call block that does not parse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

from agentgym_suite.core.actions import ParsedAction, has_visible_text, unusable_action
from agentgym_suite.core.spaces import MAX_ACTION_CHARS, action_space, reply_char_limit
from agentgym_suite.core.lifecycle import copy_callable
from agentgym_suite.core.task_splits import holdout
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.core.tool_calls import (
    TOOL_EXECUTION_ERROR,
    ParsedMessage,
    ToolCall,
    ToolCallError,
    error_payload,
    parse_tool_calls,
    render_tool_results,
    tool_name,
    validate_call,
)

MAX_TOOL_RESULT_CHARS = 20_000

CallRunner = Callable[[ToolCall], tuple[str, Any, str]]
"""Runs one parsed call and returns ``(name, result, status)`` as :meth:`ToolEnv.execute_call` does."""


@dataclass(frozen=True)
class MessageFormat:
    """Action format of tool envs: the whole assistant message is the action."""

    name: str = "message"
    instructions: str = (
        "To call a tool, write <tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call> "
        "(several blocks allowed). To talk to the user, write plain text."
    )

    max_chars: int = MAX_ACTION_CHARS
    """The longest message read (the env's :func:`~agentgym_suite.core.spaces.reply_char_limit`)."""

    def parse(self, raw: str) -> ParsedAction:
        return (unusable_action(raw, noun="message", max_chars=self.max_chars)
                or ParsedAction(raw, True, kind="message", raw=raw))


@dataclass
class Conversation:
    """What :meth:`ToolEnv._start_conversation` returns."""

    task: str
    tools: list[dict[str, Any]]
    handlers: Mapping[str, Callable[..., Any]]
    system_prompt: str = ""
    first_user_message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolRecord:
    """One executed (or rejected) call, kept for scoring and fidelity checks."""

    name: str
    arguments: dict[str, Any]
    result: Any
    ok: bool
    turn: int


class ToolEnv(TextEnv):
    """Base class of the suite's tool-calling envs.

    Args:
        end_on_tool_error: end the episode (reward 0) on a malformed call or an error
            result, as EnvACE trains; default False (the error result is shown and the
            episode goes on).
        **kwargs: see :class:`~agentgym_suite.core.text_env.TextEnv`.
    """

    default_action_format: ClassVar[str] = "message"
    examples_are_training_data: ClassVar[bool] = False
    """True when :meth:`recorded_examples` of a task come from training data (a generated
    world's gold run, a training set's recording), so a world model may be grounded on the
    task's own examples. False for benchmarks: their examples come from :meth:`training_tasks`."""

    def __init__(self, *, end_on_tool_error: bool = False, **kwargs: Any) -> None:
        self.max_reply_chars = reply_char_limit(type(self).eval_sampling_defaults.get("max_new_tokens"))
        """The longest reply read: the declared token budget's worth of characters (see ``reply_char_limit``)."""
        kwargs.setdefault("action_format", MessageFormat(max_chars=self.max_reply_chars))
        super().__init__(**kwargs)
        self.action_space = action_space(self.max_reply_chars)
        self.end_on_tool_error = end_on_tool_error
        self.messages: list[dict[str, Any]] = []
        self.tool_log: list[ToolRecord] = []
        self._tool_index: dict[str, dict[str, Any]] = {}
        self._handlers: Mapping[str, Callable[..., Any]] = {}
        self.error_runner: Callable[[ToolCallError], Any] | None = None
        """When set, every call block of a message that does not parse is answered by it (its
        result replaces the standard error payload; the block is still an invalid action). The
        rehearsal env sets it so the simulator sees malformed calls too."""
        self.call_runner: CallRunner | None = None
        """When set, every call of a message goes to it instead of :meth:`execute_call`: it
        validates, answers and logs the call (to ``tool_log``) itself. The rehearsal env sets it
        to answer calls with a world model; ``None`` (default) runs the env's own handlers."""

    # ------------------------------------------------------------------ subclass API
    def _start_conversation(self, task_id: str) -> Conversation:
        """Set up task ``task_id``: its tools, their handlers and the opening messages."""
        raise NotImplementedError

    def _user_reply(self, assistant_text: str) -> str | None:
        """The user's answer to an assistant text reply; ``None`` ends the conversation."""
        return None

    def _evaluate(self) -> tuple[float, bool]:
        """(score in [0, 1], won) of the episode so far; called when it ends."""
        raise NotImplementedError

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        """Hook after a message's calls ran; return True to end the episode (single-turn tasks)."""
        return False

    def _parse_message(self, command: str) -> ParsedMessage:
        """Split an assistant message into text and tool calls; default :func:`parse_tool_calls`.

        An env whose benchmark reads calls in another syntax too (BFCL's prompting style reads
        ``[f(a=1)]`` call lists) overrides this. Must never raise: a call that cannot be read is
        a :class:`~agentgym_suite.core.tool_calls.ToolCallError` in ``errors``.
        """
        return parse_tool_calls(command)

    def _extra_info(self) -> dict[str, Any]:
        """Env-specific keys merged into ``info`` after every step (metrics, per-turn checks)."""
        return {}

    def _info(self, *, action_valid: bool, **extra: Any) -> dict[str, Any]:
        """Every step's info carries the conversation (``messages``), also after an action the
        action format refused before it reached :meth:`_execute` (too long, empty, not text)."""
        extra.setdefault("messages", list(self.messages))
        return super()._info(action_valid=action_valid, **extra)

    def _set_tools(self, tools: list[dict[str, Any]], handlers: Mapping[str, Callable[..., Any]]) -> None:
        """Replace the tool list mid-episode (tools revealed on a later turn); ``info["tools"]`` follows."""
        self._tool_index = {tool_name(t): t for t in tools}
        self._handlers = dict(handlers)
        self._tools = list(tools)

    def _copied(self, memo: dict[int, Any]) -> None:
        """Tool handlers are often closures over the env: re-bind them to the copy."""
        super()._copied(memo)
        self._handlers = {name: copy_callable(fn, memo) for name, fn in self._handlers.items()}
        for name in ("call_runner", "error_runner"):
            if getattr(self, name) is not None:
                setattr(self, name, copy_callable(getattr(self, name), memo))

    # ------------------------------------------------------------------ hooks for wrapping envs
    def recorded_examples(self) -> list[dict[str, Any]]:
        """Real ``{"name", "arguments", "result"}`` examples of this task's tools (after ``reset``).

        A world model sees them as examples of what the tools return. Default: none. Override
        where the benchmark records real calls (replayed outputs, a gold run on a copy).
        """
        return []

    def training_tasks(self) -> tuple[dict[str, Any], list[str]]:
        """(make-kwargs overrides, task ids) of this benchmark's training split.

        A world model is grounded on the real executions of these tasks (oracle runs; see
        :mod:`agentgym_suite.methods.envace.grounding`). Default: no overrides and a fixed,
        hashed 20 % holdout of :meth:`task_ids` (for benchmarks that publish no training
        split); an env with a published split overrides this.
        """
        return {}, holdout(self.task_ids())

    def evaluation_tasks(self) -> list[str]:
        """The task ids an evaluation plays: :meth:`task_ids` without the grounding holdout
        (when :meth:`training_tasks` draws from the same split)."""
        overrides, grounding = self.training_tasks()
        if overrides:
            return self.task_ids()
        held = set(grounding)
        return [t for t in self.task_ids() if t not in held]

    @property
    def execution_free(self) -> bool:
        """True when the success check reads only the calls made, never the state tools change.

        Then an episode whose tools were answered by a world model can still be scored by
        this env's own check. Default False.
        """
        return False

    def rehearsed_score(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> tuple[float, bool] | None:
        """(score, won) of the current task from ``calls``, the validated (name, arguments) made.

        For an :attr:`execution_free` env whose check counts what its handlers saw: when a
        world model answers the calls no handler runs, so the check is recomputed here.
        ``None`` (default): the env's own end-of-episode score is right as it is.
        """
        return None

    def success_criteria(self) -> list[str]:
        """The current task's success criteria in words, from the benchmark's data; default none.

        A judge grades a transcript against them (the rehearsal env's ``judge`` reward mode).
        """
        return []

    def checklists(self) -> list[list[list[dict[str, Any]]]]:
        """The current task's checklists: ``[checklist][user turn][standard]``; default none.

        A standard is the EnvACE checklist format (question, focus_on, pass_condition,
        failure_examples, evidence, weight, required_for_next_turn), optionally with a machine
        ``check``; the rehearsal env's ``checklist`` reward mode scores them per turn
        (:mod:`agentgym_suite.envs.shared.checklists`).
        """
        return []

    @property
    def tool_index(self) -> dict[str, dict[str, Any]]:
        """The tools offered now (name -> OpenAI schema), a copy: the allow-list calls are checked against."""
        return dict(self._tool_index)

    # ------------------------------------------------------------------ TextEnv hooks
    def format_action(self, command: str) -> str:
        return command

    def _load_task(self, task_id: str) -> TaskStart:
        convo = self._start_conversation(task_id)
        self._tool_index = {tool_name(t): t for t in convo.tools}
        self._handlers = dict(convo.handlers)
        unknown = set(self._handlers) - set(self._tool_index)
        if unknown:
            raise ValueError(f"handlers without a tool schema: {sorted(unknown)}")
        self.messages = []
        if convo.system_prompt:
            self.messages.append({"role": "system", "content": convo.system_prompt})
        if convo.first_user_message:
            self.messages.append({"role": "user", "content": convo.first_user_message})
        self.tool_log = []
        extra = {"messages": list(self.messages), **self._extra_info(), **convo.extra}
        return TaskStart(convo.first_user_message, convo.task, None, list(convo.tools), extra)

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        message = self._parse_message(command)
        if not message.has_tool_calls and not has_visible_text(message.content):
            # e.g. an OpenAI-shaped message with empty content and no calls: not a reply to
            # anyone, so the conversation is left exactly as it was
            reason = "the message has no tool call and no visible text"
            observation = self._explain_invalid(ParsedAction(None, False, reason, kind="message", raw=command))
            score, won = self._running_score()
            return StepOutcome(observation, 0.0, score, won, action_valid=False,
                               extra={"messages": list(self.messages), "invalid_reason": reason, **self._extra_info()})
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.calls:
            assistant["tool_calls"] = [c.to_openai() for c in message.calls]
        self.messages.append(assistant)
        if not message.has_tool_calls:
            reply = self._user_reply(message.content)
            if reply is None:
                return self._finish("The conversation has ended.", valid=True)
            self.messages.append({"role": "user", "content": reply})
            return self._continue(reply, valid=True)
        results: list[tuple[str, Any]] = []
        valid = not message.errors
        failed = not valid
        for error in message.errors:
            payload = self.error_runner(error) if self.error_runner is not None else error_payload(error)
            results.append((error.name or "invalid_tool_call", payload))
        for call in message.calls:
            name, result, status = self.run_call(call)
            results.append((name, result))
            valid = valid and status != "invalid"
            failed = failed or status != "ok"
        for (name, result), call_id in zip(results, self._result_ids(message)):
            body = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
            self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": body})
        observation = render_tool_results(results)
        if failed and self.end_on_tool_error:
            return self._finish(observation, valid=valid, forced_fail=True)
        if self._after_calls(message.calls):
            return self._finish(observation, valid=valid)
        return self._continue(observation, valid=valid)

    def run_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """Answer one call: with :attr:`call_runner` when one is set, else :meth:`execute_call`."""
        if self.call_runner is not None:
            return self.call_runner(call)
        return self.execute_call(call)

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """Validate and execute one call with the env's own handlers, and log it. Never raises.

        Returns (name, result, status) where status is ``ok``, ``invalid`` (unknown tool or
        arguments that break the schema: the action was malformed) or ``error`` (the tool
        ran and reported or raised an error: a valid action with a failed outcome).
        """
        error = validate_call(call, self._tool_index)
        if error is None and call.name not in self._handlers:
            error = ToolCallError(TOOL_EXECUTION_ERROR, f"{call.name} is listed but not available in this environment", name=call.name)
        if error is not None:
            result: Any = error_payload(error)
            self.tool_log.append(ToolRecord(call.name, call.arguments, result, False, self.turn))
            return call.name, result, "error" if error.code == TOOL_EXECUTION_ERROR else "invalid"
        try:
            result = self._handlers[call.name](**call.arguments)
            ok = not (isinstance(result, dict) and "error" in result and len(result) == 1)
        except Exception as exc:  # a tool failing is data for the agent, not a crash
            result = error_payload(ToolCallError(TOOL_EXECUTION_ERROR, f"{call.name} failed: {type(exc).__name__}: {exc}", name=call.name))
            ok = False
        text = json.dumps(result, ensure_ascii=False, default=str) if not isinstance(result, str) else result
        if len(text) > MAX_TOOL_RESULT_CHARS:
            result = text[:MAX_TOOL_RESULT_CHARS] + f"... [truncated {len(text) - MAX_TOOL_RESULT_CHARS} characters]"
        self.tool_log.append(ToolRecord(call.name, call.arguments, result, ok, self.turn))
        return call.name, result, "ok" if ok else "error"

    # ------------------------------------------------------------------ internals
    @staticmethod
    def _result_ids(message: Any) -> list[str]:
        return [e.id or f"error_{i}" for i, e in enumerate(message.errors)] + [c.id for c in message.calls]

    def _continue(self, observation: str, *, valid: bool) -> StepOutcome:
        score, won = self._running_score()
        extra = {"messages": list(self.messages), **self._extra_info()}
        return StepOutcome(observation, 0.0, score, won, False, action_valid=valid, extra=extra)

    def _finish(self, observation: str, *, valid: bool, forced_fail: bool = False) -> StepOutcome:
        score, won = (0.0, False) if forced_fail else self._evaluate()
        extra: dict[str, Any] = {"messages": list(self.messages), **self._extra_info()}
        if forced_fail:
            extra["error"] = "a tool call failed and end_on_tool_error is set"
        return StepOutcome(observation, float(score), float(score), bool(won), True, action_valid=valid, extra=extra)

    def _running_score(self) -> tuple[float, bool]:
        """Score shown mid-episode; by default 0 until the end (override for dense scores)."""
        return 0.0, False

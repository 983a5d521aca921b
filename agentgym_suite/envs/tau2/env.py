"""``Tau2-v0``: tau2-bench customer-service tasks (retail, airline, telecom, banking_knowledge, mock) with a simulated user.

The agent gets the domain policy as its system prompt and talks to a simulated customer;
its tool calls run against this suite's own implementation of the domain's tools over a
fresh copy of the domain database. When the user ends the conversation (``###STOP###``,
``###TRANSFER###`` or ``###OUT-OF-SCOPE###``) the episode is scored with the task's reward
bases (see :mod:`agentgym_suite.envs.tau2.evaluation`); ``info["reward_breakdown"]`` holds
the per-basis scores and the bases left unscored. ``won`` is True when the reward is 1.0.

The customer is a setting (``user=``): ``"llm:<backend spec>"`` is τ²-bench's LLM user
simulator; ``"scripted"`` is an offline test double (see
:mod:`~agentgym_suite.envs.tau2.scripted_user`) whose numbers are not τ² numbers. Every
``info`` names the user (``user_simulator``) and the NL-assertion judge (``nl_judge``);
at the end ``scorable`` says whether the reward is a τ² score (False when the task has NL
assertions and no judge was given) and ``tau2_end`` how the conversation ended (the
customer's end token, or ``user_error`` when the simulated customer failed).

In telecom the customer also has a simulated phone (user-side tools): the agent asks the
customer to check or change settings, the customer runs the phone's tools, and the task's
environment assertions check the phone and the account at the end. Calls made on the
phone are listed in ``info["user_tool_calls"]`` and count for the ACTION basis.
``domain="telecom-workflow"`` plays telecom's tasks under the workflow version of the policy.

As τ²-bench's harness (checked by ``tests/conformance/test_tau2.py`` against the official code at
the pinned commit): the agent's system prompt is upstream's instruction block followed by the
policy, and its history opens with the agent's greeting; a conversation ends with reward 0 at 200
steps (messages of any role) or 10 tool errors (``info["termination_reason"]``, see
:mod:`~agentgym_suite.envs.tau2.limits`); tool results read as upstream renders them
(:mod:`~agentgym_suite.envs.tau2.prompts`); the reward follows upstream's evaluator
(:mod:`~agentgym_suite.envs.tau2.evaluation`). ``eval_sampling_defaults`` carry the harness's sampling
(temperature 0) and the leaderboard's 4 trials, and :meth:`Tau2Env.sweeps` (``domains``) its metrics.

Departures, each reported by :meth:`Tau2Env.leaderboard_departures` when the settings bring it:
the scripted customer (not an LLM user), tasks whose NL assertions have no judge (reported
unscored), other limits, tool descriptions of the suite's own wording when upstream's tool sources are not in the
data folder (:mod:`~agentgym_suite.envs.tau2.tool_source`; with them the tools are shown exactly as upstream shows them); an episode in which ``calculate`` refused an integer power over a million bits (a guard
against hanging the machine: upstream's ``eval`` would compute it however long it takes; see
:func:`~agentgym_suite.envs.tau2.toolkit.safe_calculate`) names that in its ``info["leaderboard_departures"]`` and ``info["departure_in_play"]``,
and the run's ``summary.json`` lists it. Always: an env
assertion whose function refuses is not met (upstream's evaluator stops there); upstream sends the
agent's requests with no token cap, ``eval_sampling_defaults`` allow 4096.

``domain="banking_knowledge"`` plays the banking domain (:mod:`~agentgym_suite.envs.tau2.banking`) under a
retrieval configuration (``retrieval=``, default ``bm25_grep``: upstream's BM25 ``KB_search`` and ``grep``;
also ``bm25``, ``grep_only``, ``no_knowledge``, ``full_kb``, ``golden_retrieval``, and the embedding ones with
``embedder=``). Departure: the leaderboard's banking runs use ``alltools`` (hosted OpenAI embeddings and a
sandboxed shell), which does not run here; :meth:`Tau2Env.leaderboard_departures` names it.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable, ClassVar

from agentgym_suite.core.actions import ParsedAction, has_visible_text
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import StepOutcome, TaskStart
from agentgym_suite.core.tool_calls import (
    TOOL_EXECUTION_ERROR,
    ToolCall,
    ToolCallError,
    tool_parameters,
    error_payload,
    parse_tool_calls,
    validate_call,
)
from agentgym_suite.core.tool_env import Conversation, ToolEnv, ToolRecord
from agentgym_suite.envs.shared.chat_models import LLM_PREFIX, BackendChat
from agentgym_suite.envs.tau2.banking.knowledge import Embedder, Retrieval, load_documents
from agentgym_suite.envs.tau2.banking.policy import DEFAULT_VARIANT, LEADERBOARD_VARIANT, build_policy
from agentgym_suite.envs.tau2.banking.policy import variant as banking_variant
from agentgym_suite.envs.tau2.comparability import warn_once
from agentgym_suite.envs.tau2.data import SPLITS, DomainData, load_domain
from agentgym_suite.envs.tau2.evaluation import GoldHashes, NLJudge, RewardBreakdown, action_matches, evaluate, premature_end
from agentgym_suite.envs.tau2.limits import MAX_ERRORS, MAX_STEPS, ConversationOver, StepCounter
from agentgym_suite.envs.tau2.record_shapes import SHAPES
from agentgym_suite.envs.tau2.prompts import agent_system_prompt, tool_error_text, tool_result_text
from agentgym_suite.envs.tau2.nl_judge import ModelNLJudge
from agentgym_suite.envs.tau2.scripted_user import ScriptedUser, device_instruction
from agentgym_suite.envs.tau2.users import AGENT_GREETING, END_TOKENS, LLMUser, UserContext, UserSimulator, end_token
from agentgym_suite.envs.tau2.toolkit import CALCULATE_GUARD_DEPARTURE, PowerTooLarge
from agentgym_suite.envs.tau2.tool_source import DESCRIPTIONS_DEPARTURE, as_upstream, sources_missing
from agentgym_suite.envs.tau2.user_view import opening_view
from agentgym_suite.envs.tau2.world import World, build_world, gold_actions, replay_gold

USER_SETTINGS = ("scripted", "llm:<backend spec>")


class Tau2Env(ToolEnv):
    """tau2-bench customer service with a simulated user.

    Args:
        domain: ``retail``, ``airline``, ``telecom``, ``telecom-workflow``, ``banking_knowledge`` or ``mock``.
        split: ``base`` (all tasks, default), ``train`` or ``test`` from ``split_tasks.json`` (telecom also
            has ``small``, the 20 tasks of ``tasks_small.json``).
        user: who plays the customer. ``"llm:<backend spec>"`` (e.g. ``llm:hf:Qwen/Qwen3-8B``,
            ``llm:openai:gpt-4.1@URL``, ``llm:tiny``) is τ²-bench's LLM user simulator;
            ``"scripted"`` is the offline test double; any :class:`UserSimulator` object works
            too. Default: the LLM user when ``user_generate`` is given, else ``"scripted"``
            (``agentgym eval`` defaults to the agent's own model when the agent is one).
        user_generate: a chat callable ``(messages) -> str`` to play the LLM user (overrides ``user``).
        user_sampling: sampling options of an ``llm:`` user (``temperature``, default 0 as in
            τ²-bench; ``max_new_tokens``; ``seed``).
        judge: the NL-assertion judge: a backend spec (``tiny``, ``hf:PATH``, ``llm:openai:…``)
            or a callable ``(assertions, messages) -> list[bool]``. Without one, tasks with NL
            assertions end not scorable (``info["scorable"]`` False) instead of being scored on
            the other bases.
        nl_judge: older name of ``judge`` (a callable).
        max_user_turns: how many replies the scripted user gives before it stops.
        retrieval: banking_knowledge's retrieval configuration (upstream's names): ``bm25_grep`` (default),
            ``bm25``, ``grep_only``, ``no_knowledge``, ``full_kb``, ``golden_retrieval``, or an embedding one
            (``openai_embeddings``, ``qwen_embeddings``, their ``_grep`` forms) with ``embedder``.
        embedder: texts -> embedding vectors, for the embedding configurations (e.g. a local model; upstream's
            hosted models do not run offline, so such a run names that departure).
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``domain``: str: the domain of the task (airline, retail, telecom, mock).
        ``nl_judge``: str: who graded the task's natural-language assertions ('none' without a judge).
        ``tau2_end``: str, when the episode ended: how the conversation ended (the user's stop, transfer or out-of-scope token, the agent's reply, a user error, or 'none').
        ``db_match``: bool or None, when the episode ended: both databases equal the gold run's (None: not checked, the conversation ended early).
        ``termination_reason``: str, when the episode ended: the end in τ²-bench's terms (user_stop, max_steps, too_many_errors, user_error or none).
        ``user_error``: str: why the simulated user failed (the episode then scores 0, as upstream).
        ``reward_breakdown``: dict, when the episode ended: the reward's components and details.
        ``user_tool_calls``: list[dict], telecom: the tool calls the simulated user made on their device.
        ``comparable_to_leaderboard``: bool: whether these settings play τ²-bench's leaderboard setting (False with the scripted user).
        ``leaderboard_departures``: list[str]: why not (see :meth:`leaderboard_departures`); a warning names them at the first reset.
    """

    benchmark: ClassVar[str] = "tau2"
    info_keys: ClassVar[dict[str, str]] = {
        "domain": "str: the domain of the task (airline, retail, telecom, mock).",
        "nl_judge": "str: who graded the task's natural-language assertions ('none' without a judge).",
        "tau2_end": "str, when the episode ended: how the conversation ended (the user's stop, transfer or out-of-scope token, the agent's reply, a user error, or 'none').",
        "db_match": "bool or None, when the episode ended: both databases equal the gold run's (None: not checked, the conversation ended early).",
        "termination_reason": "str, when the episode ended: the end in τ²-bench's terms (user_stop, max_steps, too_many_errors, user_error or none).",
        "user_error": "str: why the simulated user failed (the episode then scores 0, as upstream).",
        "reward_breakdown": "dict, when the episode ended: the reward's components and details.",
        "user_tool_calls": "list[dict], telecom: the tool calls the simulated user made on their device.",
        "comparable_to_leaderboard": "bool: whether these settings play τ²-bench's leaderboard setting (False with the scripted user).",
        "leaderboard_departures": "list[str]: why not, when comparable_to_leaderboard is False (see leaderboard_departures()).",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(oracle_examples=15)
    label_keys: ClassVar[tuple[str, ...]] = ("nl_judge",)
    user_setting: ClassVar[str] = "user"
    judge_setting: ClassVar[str] = "judge"
    eval_sampling_defaults: ClassVar[dict[str, Any]] = {"temperature": 0.0, "max_new_tokens": 4096, "k": 4}
    """τ²-bench runs its agent at temperature 0 with no cap of its own on a reply (4096 tokens stand in for
    the model's limit) and the leaderboard asks for 4 trials per task (Pass^1..Pass^4)."""

    @classmethod
    def user_is_set(cls, kwargs: dict[str, Any]) -> bool:
        """A ``user`` or a ``user_generate`` chat callable says who plays the customer."""
        return kwargs.get("user") is not None or kwargs.get("user_generate") is not None

    @classmethod
    def sweeps(cls) -> list[Any]:
        """``--sweep domains:A,B``: one run per domain, then τ²-bench's leaderboard view
        (see :mod:`~agentgym_suite.envs.tau2.sweep`)."""
        return ["agentgym_suite.envs.tau2.sweep:domains_sweep"]

    def __init__(
        self,
        domain: str = "retail",
        split: str = "base",
        user: str | UserSimulator | None = None,
        user_generate: Callable[[list[dict[str, Any]]], str] | None = None,
        user_sampling: dict[str, Any] | None = None,
        judge: str | NLJudge | None = None,
        nl_judge: NLJudge | None = None,
        max_user_turns: int = 8,
        max_steps: int = MAX_STEPS,
        max_errors: int = MAX_ERRORS,
        retrieval: str = DEFAULT_VARIANT,
        embedder: Embedder | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if max_steps < 1 or max_errors < 1:
            raise ValueError(f"max_steps and max_errors must be >= 1, got {max_steps} and {max_errors}.")
        self.max_steps, self.max_errors = int(max_steps), int(max_errors)
        self.domain = domain
        self.data: DomainData = load_domain(domain)
        self.retrieval, self.embedder = retrieval, embedder
        self._variant = banking_variant(retrieval) if self.data.domain == "banking_knowledge" else None
        if self._variant is not None and self._variant.kb_search == "dense" and embedder is None:
            raise ValueError(f"retrieval={retrieval!r} searches by embeddings: pass embedder=<texts -> vectors> (a local "
                             f"embedding model), or use retrieval='bm25_grep'.")
        if split not in self.data.splits:
            raise ValueError(f"split={split!r}; the {domain} domain has splits {sorted(self.data.splits)} (suite default: {SPLITS}).")
        self.split = split
        self._ids = [i for i in self.data.splits[split] if i in self.data.tasks]
        self.user: UserSimulator = self._make_user(user, user_generate, dict(user_sampling or {}), max_user_turns)
        self.user_label: str = str(getattr(self.user, "label", None) or f"custom:{type(self.user).__name__}")
        self.nl_judge, self.judge_label = self._make_judge(judge if judge is not None else nl_judge)
        self.world: World | None = None
        self._departures: list[str] | None = None
        self._task: dict[str, Any] = {}
        self._history_calls: list[tuple[str, dict[str, Any]]] = []
        self._user_calls: list[tuple[int, str, dict[str, Any]]] = []  # (agent calls made before it, name, arguments)
        self._user_turns = 0
        self._guard_fired = False
        """Whether ``calculate``'s guard refused a power this episode (a departure the episode then names)."""
        self._end: str | None = None
        self._user_error: str | None = None
        self._breakdown: RewardBreakdown | None = None
        self._gold_hashes: dict[str, GoldHashes] = {}
        self._counter = StepCounter(self.max_steps, self.max_errors)
        self._call_errors = 0
        self.customer_view: list[dict[str, Any]] = []
        """The customer's own side of the conversation as upstream's user simulator keeps it (see ``user_view``)."""
        self.tool_messages: list[dict[str, Any]] = []
        """Every tool result of the conversation as the caller read it: ``content`` (text), ``error``, ``requestor``."""

    def _make_user(self, user: Any, user_generate: Any, sampling: dict[str, Any], max_user_turns: int) -> UserSimulator:
        """The customer for the ``user``/``user_generate`` settings (see the class docstring)."""
        if user_generate is not None:
            return LLMUser(user_generate, self.data.guidelines, guidelines_tools=self.data.guidelines_tools)
        if user is None or user == "scripted":
            return ScriptedUser(max_turns=max_user_turns)
        if isinstance(user, str):
            if not user.startswith(LLM_PREFIX) or not user[len(LLM_PREFIX):].strip():
                raise ValueError(f"user={user!r}; use one of {', '.join(USER_SETTINGS)} "
                                 "(e.g. 'llm:hf:Qwen/Qwen3-8B', 'llm:tiny'), or pass a UserSimulator.")
            chat = BackendChat(spec=user, **{"role": "user", **sampling})
            return LLMUser(chat, self.data.guidelines, label=f"llm:{chat.label}", guidelines_tools=self.data.guidelines_tools)
        if isinstance(user, UserSimulator):
            return user
        raise TypeError(f"user must be 'scripted', 'llm:<backend spec>' or a UserSimulator, got {type(user).__name__}")

    @staticmethod
    def _make_judge(judge: Any) -> tuple[NLJudge | None, str]:
        """The NL-assertion judge and its label for a ``judge`` setting."""
        if judge is None:
            return None, "none"
        if isinstance(judge, str):
            chat = BackendChat(spec=judge, role="judge")
            return ModelNLJudge(chat, label=f"llm:{chat.label}"), f"llm:{chat.label}"
        if callable(judge):
            return judge, str(getattr(judge, "label", None) or f"custom:{getattr(judge, '__name__', type(judge).__name__)}")
        raise TypeError(f"judge must be a backend spec or a callable (assertions, messages) -> list[bool], got {type(judge).__name__}")

    # ------------------------------------------------------------------ ToolEnv API
    def training_tasks(self) -> tuple[dict[str, Any], list[str]]:
        """tau2's published ``train`` split of this domain (``split_tasks.json``)."""
        if "train" not in self.data.splits:
            return super().training_tasks()
        return {"split": "train"}, [i for i in self.data.splits["train"] if i in self.data.tasks]

    def evaluation_tasks(self) -> list[str]:
        """The ``test`` split's tasks when this env plays all of them (``base``), else this split's
        (none for ``train``: it is the grounding split)."""
        if self.split == "train":
            return []
        if self.split == "base" and "test" in self.data.splits:
            return [i for i in self.data.splits["test"] if i in self.data.tasks]
        return self.task_ids()

    def task_ids(self) -> list[str]:
        return list(self._ids)

    def _start_conversation(self, task_id: str) -> Conversation:
        warn_once("Tau2-v0", self._settings_departures())  # once per process and setting
        self._task = self.data.tasks[task_id]
        self.world = build_world(self.data, self._task)
        self._history_calls = []
        self._user_calls = []
        self._user_turns = 0
        self._guard_fired = False
        self._end = self._user_error = None
        self._breakdown = None
        self._counter = StepCounter(self.max_steps, self.max_errors)
        self.tool_messages = []
        history = self._history_messages()
        raw_history = (self._task.get("initial_state") or {}).get("message_history") or []
        self.customer_view = opening_view(raw_history) if raw_history else [{"role": "assistant", "content": AGENT_GREETING}]
        first = ""
        if not (history and history[-1]["role"] == "user"):
            first = self._ask_user(self._opening_message) or ""
            self._counter.step()
            if first:
                self.customer_view.append({"role": "user", "content": first, "tool_calls": None})
        policy = self.data.policy
        if self._variant is not None:
            policy = self._banking_setup()
        tools, _ = as_upstream(self.data.folder, "agent", self.world.agent.schemas())
        return Conversation(
            task=str(self._task.get("ticket") or first or "Help the customer under the policy."),
            tools=tools,
            handlers=self.world.agent.handlers(),
            system_prompt=agent_system_prompt(policy),
            first_user_message=first,
            extra={"domain": self.domain},
        )

    def _load_task(self, task_id: str) -> TaskStart:
        start = super()._load_task(task_id)
        history = self._history_messages()
        if not history:  # τ²-bench opens every conversation with the agent's fixed greeting
            head = [m for m in self.messages if m["role"] == "system"]
            tail = [m for m in self.messages if m["role"] != "system"]
            self.messages = head + [{"role": "assistant", "content": AGENT_GREETING}] + tail
            start.extra["messages"] = list(self.messages)
        if history:
            head = [m for m in self.messages if m["role"] == "system"]
            tail = [m for m in self.messages if m["role"] != "system"]
            self.messages = head + history + tail
            start.extra["messages"] = list(self.messages)
            if not start.observation:
                start.observation = str(history[-1].get("content") or "")
        return start

    def _ask_user(self, ask: Callable[[], str]) -> str | None:
        """The customer's message, or None when it failed; records an end token or the failure in ``_end``."""
        try:
            text = str(ask())
        except ConversationOver:  # a limit was reached during the customer's own tool calls
            return None
        except Exception as exc:  # any simulator failure ends the episode as a user error, not a crash
            self._end, self._user_error = "user_error", f"{type(exc).__name__}: {exc}"
            return None
        self._end = end_token(text)
        return text

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self._end is not None:  # the customer ended (or failed) before the agent's turn: nothing more happens
            note = "The simulated customer failed." if self._end == "user_error" else "The conversation has ended."
            return self._finish(note, valid=True)
        message = parse_tool_calls(command)
        if not message.has_tool_calls and not has_visible_text(message.content):
            return super()._execute(command, parsed)  # an invalid action: nothing is sent, no step counted
        self._counter.step()  # the agent's message
        self._call_errors = len(message.errors)
        for error in message.errors:  # blocks that do not parse are answered with an error too
            self.tool_messages.append({"content": tool_error_text(error.message), "error": True, "requestor": "assistant"})
        outcome = super()._execute(command, parsed)
        if message.has_tool_calls and not outcome.terminated:
            self._counter.step(self._call_errors)  # the environment's answer
            reason = self._counter.reached()
            if reason is not None:
                self._end = reason
                return self._finish(outcome.observation, valid=outcome.action_valid)
        return outcome

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """Run one agent call; the agent reads the result as τ²-bench renders it (:func:`tool_result_text`,
        or ``Error: <message>``). ``tool_log`` keeps the value itself (or the error payload)."""
        # an unknown tool or a missing argument is refused before the tool runs, in upstream's words; the types and
        # allowed values of the arguments are left to the tool, as upstream passes them unchecked
        problem = validate_call(call, {name: _names_only(schema) for name, schema in self._tool_index.items()})
        if problem is None and call.name not in self._handlers:
            problem = ToolCallError(TOOL_EXECUTION_ERROR, f"Tool '{call.name}' not found.", name=call.name)
        if problem is not None:
            value: Any = error_payload(problem)
            text, ok = tool_error_text(self._refusal_text(call, problem)), False
            status = "error" if problem.code == TOOL_EXECUTION_ERROR else "invalid"
        else:
            try:
                value = self._handlers[call.name](**call.arguments)
                text, ok, status = tool_result_text(value, SHAPES.get(self.data.domain, ())), True, "ok"
            except Exception as exc:  # a refusal is data for the agent, not a crash
                self._guard_fired = self._guard_fired or isinstance(exc, PowerTooLarge)
                value = error_payload(ToolCallError(TOOL_EXECUTION_ERROR, f"{call.name} failed: {exc}", name=call.name))
                text, ok, status = tool_error_text(str(exc)), False, "error"
        self.tool_log.append(ToolRecord(call.name, call.arguments, value, ok, self.turn))
        self.tool_messages.append({"content": text, "error": not ok, "requestor": "assistant"})
        self._call_errors += int(not ok)
        return call.name, text, status

    def _refusal_text(self, call: ToolCall, problem: ToolCallError) -> str:
        """What the agent reads for a refused call: upstream's words where upstream refuses it too (an unknown
        tool: its toolkit's message; a missing or unexpected argument: the ``TypeError`` Python raises when
        upstream calls the tool), else the suite's check with its code."""
        handler = self._handlers.get(call.name)
        if handler is None:
            return f"Tool '{call.name}' not found."
        method = inspect.unwrap(handler)  # the toolkit's own method (its wrappers keep it as __wrapped__)
        if method is not handler:
            try:
                inspect.signature(method).bind(**call.arguments)
            except TypeError:
                try:  # binding failed, so the call raises before the tool's body runs
                    method(**call.arguments)
                except TypeError as exc:
                    return str(exc)
        return f"{problem.message} ({problem.code})"

    def _user_reply(self, assistant_text: str) -> str | None:
        reason = self._counter.reached()  # checked once the agent's message is sent
        if reason is not None:
            self._end = reason
            return None
        self._user_turns += 1
        self.customer_view.append({"role": "assistant", "content": assistant_text})
        context = self._user_context()
        reply = self._ask_user(lambda: self.user.reply(context))
        if reply is None:
            return None
        self.customer_view.append({"role": "user", "content": reply, "tool_calls": None})
        self._counter.step()
        self._end = self._counter.reached() or self._end
        if self._end is not None:
            self.messages.append({"role": "user", "content": reply})
            return None
        return reply

    def _user_context(self) -> UserContext:
        """What the customer simulator gets for its next message."""
        return UserContext(
            task=self._task,
            messages=list(self.messages),
            transferred=any(r.name == "transfer_to_human_agents" and r.ok for r in self.tool_log),
            user_turns=max(0, self._user_turns - 1),
            run_user_tool=self._run_user_tool,
            user_tools=self._user_tool_schemas(),
            customer_view=self.customer_view,
            call_user_tools=self._user_tool_messages,
        )

    def _opening_message(self) -> str:
        """The customer's first message: an LLM customer answers its view (the greeting, or the task's pre-filled
        history) and may use its tools first, as upstream's; other simulators give their ``first_message``."""
        if isinstance(self.user, LLMUser):
            return self.user.opening(self._user_context())
        return self.user.first_message(self._task)

    def _evaluate(self) -> tuple[float, bool]:
        assert self.world is not None
        if self._end == "user_error":  # τ²-bench scores a run the user simulator broke as 0
            self._breakdown = premature_end("user_error", f"the simulated customer failed: {self._user_error}")
        elif self._end in ("max_steps", "too_many_errors"):
            self._breakdown = premature_end(self._end, f"the conversation reached {self._end} ({self._counter.steps} steps, "
                                                       f"{self._counter.errors} tool errors)")
        else:
            self._breakdown = evaluate(self._task, self.world, self.gold_hashes(), self.messages, self._calls_so_far(), self.nl_judge)
        return self._breakdown.reward, self._breakdown.scorable and self._breakdown.reward == 1.0

    def _extra_info(self) -> dict[str, Any]:
        departures = self._settings_departures() + ([CALCULATE_GUARD_DEPARTURE] if self._guard_fired else [])
        extra: dict[str, Any] = {"user_simulator": self.user_label, "nl_judge": self.judge_label,
                                 "comparable_to_leaderboard": not departures, "leaderboard_departures": departures}
        if self._guard_fired:
            extra["departure_in_play"] = CALCULATE_GUARD_DEPARTURE
        if self._breakdown is not None:
            extra["reward_breakdown"] = self._breakdown.as_info()
            extra["scorable"] = self._breakdown.scorable
            extra["tau2_end"] = self._end or "none"
            extra["termination_reason"] = self.termination_reason()
            extra["db_match"] = self._breakdown.details.get("db_match")
        if self._user_error:
            extra["user_error"] = self._user_error
        if self._user_calls:
            extra["user_tool_calls"] = [{"name": n, "arguments": dict(a)} for _, n, a in self._user_calls]
        return extra

    def oracle(self) -> list[str]:
        """Remaining gold actions, one per message, then a closing reply with the required info.

        The agent's own actions are tool calls; actions the customer must take on their phone
        are messages asking them to (see :func:`~agentgym_suite.envs.tau2.scripted_user.device_instruction`),
        including the phone changes the task's user-side env assertions check.
        Progress is the longest prefix of the gold actions done in order, so an action the
        task expects twice (e.g. two reboots) is asked for twice.
        """
        golds = gold_actions(self._task)
        start = 0
        for name, arguments in self._calls_so_far():
            if start < len(golds) and action_matches(golds[start], name, arguments):
                start += 1
        steps = []
        todo = [(a.get("requestor", "assistant"), a["name"], a.get("arguments") or {}) for a in golds[start:]]
        todo += [("assistant", name, arguments) for name, arguments in self._assertion_fixes("assistant")]
        todo += [("user", name, arguments) for name, arguments in self._assertion_fixes("user")]
        for side, name, arguments in todo:
            if side == "user":
                steps.append(device_instruction(name, arguments))
                continue
            body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
            steps.append(f"<tool_call>\n{body}\n</tool_call>")
        infos = [str(i) for i in (self._task.get("evaluation_criteria") or {}).get("communicate_info") or []]
        closing = "I have taken care of your request."
        if infos:
            closing += " For your reference: " + "; ".join(infos) + "."
        steps.append(closing)
        return steps

    def success_criteria(self) -> list[str]:
        """The task's natural-language assertions, and each fact the agent must tell the customer."""
        criteria = self._task.get("evaluation_criteria") or {}
        out = [str(item) for item in criteria.get("nl_assertions") or []]
        out += [f"The assistant tells the user: {item}" for item in criteria.get("communicate_info") or []]
        return out

    def termination_reason(self) -> str:
        """How the conversation ended, in τ²-bench's terms: ``user_stop`` (an end token), ``max_steps``,
        ``too_many_errors``, ``user_error``, or ``none`` (not ended, or cut by the agent-action limit)."""
        if self._end in END_TOKENS:
            return "user_stop"
        return self._end or "none"

    def _settings_departures(self) -> list[str]:
        """:meth:`leaderboard_departures`, read once (the settings do not change)."""
        if self._departures is None:
            self._departures = self.leaderboard_departures()
        return list(self._departures)

    def leaderboard_departures(self) -> list[str]:
        """Why these settings' scores are not τ²-bench leaderboard scores (empty: comparable)."""
        reasons = []
        if isinstance(self.user, ScriptedUser) or self.user_label == "scripted":
            reasons.append("the customer is the scripted offline test double, not τ²-bench's LLM user simulator "
                           "(pass --user llm:<backend spec>)")
        if self.nl_judge is None and self.nl_tasks():
            reasons.append(f"{len(self.nl_tasks())} task(s) of this split need an NL-assertion judge and are reported "
                           "unscored (pass --judge <backend spec>)")
        if (self.max_steps, self.max_errors) != (MAX_STEPS, MAX_ERRORS):
            reasons.append(f"limits max_steps={self.max_steps}, max_errors={self.max_errors} differ from τ²-bench's "
                           f"{MAX_STEPS} and {MAX_ERRORS}")
        if self._variant is not None and self.retrieval != LEADERBOARD_VARIANT:
            reasons.append(f"banking_knowledge retrieval {self.retrieval!r}: the leaderboard's banking runs use "
                           f"{LEADERBOARD_VARIANT!r} (BM25 + OpenAI text-embedding-3-large + a sandboxed shell), which "
                           "needs hosted embeddings and a shell this suite does not run")
        if sources_missing(self.data.folder):
            reasons.append(DESCRIPTIONS_DEPARTURE)
        if self._variant is not None and self.embedder is not None:
            reasons.append("banking_knowledge dense search uses the given embedder, not upstream's hosted embedding model")
        return reasons

    def _user_tool_schemas(self) -> list[dict[str, Any]]:
        """The customer's tools as the customer sees them: those the task lists (``user_tools``), else all."""
        if self.world is None or self.world.user is None:
            return []
        schemas, _ = as_upstream(self.data.folder, "user", self.world.user.schemas())
        listed = self._task.get("user_tools")
        if isinstance(listed, list):
            schemas = [s for s in schemas if s["function"]["name"] in listed]
        return schemas

    def _banking_setup(self) -> str:
        """Give the banking agent its retrieval tools; the policy of the chosen retrieval configuration."""
        assert self.world is not None and self._variant is not None and self.data.folder is not None
        documents = load_documents(str(self.data.folder / "documents"))
        self.world.agent.retrieval = Retrieval(documents, kb_search=self._variant.kb_search,  # type: ignore[attr-defined]
                                               grep_tool=self._variant.grep, embedder=self.embedder)
        return build_policy(self.data.folder / "prompts", self._variant, documents, self._task)

    def nl_tasks(self) -> list[str]:
        """Ids of this split's tasks whose reward needs the NL-assertion judge."""
        out = []
        for task_id in self._ids:
            criteria = self.data.tasks[task_id].get("evaluation_criteria") or {}
            if "NL_ASSERTION" in (criteria.get("reward_basis") or []) and criteria.get("nl_assertions"):
                out.append(task_id)
        return out

    # ------------------------------------------------------------------ helpers
    def gold_hashes(self) -> GoldHashes:
        """Hashes of the agent and user databases after replaying the current task's gold actions on fresh copies (cached)."""
        key = str(self._task["id"])
        if key not in self._gold_hashes:
            world = replay_gold(self.data, self._task)
            self._gold_hashes[key] = (world.state_hash(), world.user_state_hash())
        return self._gold_hashes[key]

    def gold_hash(self) -> str:
        """Hash of the agent-side database after the gold actions (see :meth:`gold_hashes`)."""
        return self.gold_hashes()[0]

    def _assertion_fixes(self, side: str) -> list[tuple[str, dict[str, Any]]]:
        """Calls on ``side`` that make the task's currently failing env assertions hold."""
        if self.world is None:
            return []
        toolkit = self.world.user if side == "user" else self.world.agent
        if toolkit is None:
            return []
        fixes = []
        for assertion in (self._task.get("evaluation_criteria") or {}).get("env_assertions") or []:
            if assertion.get("env_type", "assistant") != side or not assertion.get("assert_value", True):
                continue
            try:
                holds = bool(self.world.run(side, assertion["func_name"], assertion.get("arguments") or {}))
            except (ValueError, KeyError, TypeError):
                holds = False
            fix = None if holds else toolkit.assertion_fix(assertion["func_name"], assertion.get("arguments") or {})
            if fix is not None:
                fixes.append(fix)
        return fixes

    def _run_user_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run a user-side tool for the simulated customer as one message of one call, and record it; raises
        ValueError on refusal (what scripted customers use)."""
        if self.world is None or self.world.user is None:
            raise ValueError("this domain gives the customer no tools")
        self._counter.step()  # the customer's tool-call message
        _, error, result = self._customer_call(name, arguments)
        self._counter.step(int(error is not None))  # the environment's answer
        self._check_limits()
        if error is not None:
            raise ValueError(error)
        return result

    def _user_tool_messages(self, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool]]:
        """Run the tool calls of one customer message, as upstream's orchestrator does (one step for the message,
        one for the environment's answer to all its calls, each failed call an error), and return each result as
        the customer reads it (upstream's text, or ``Error: ...``) with whether it failed."""
        self._counter.step()  # the customer's tool-call message
        answers = [self._customer_call(name, arguments)[:2] for name, arguments in calls]
        self._counter.step(sum(int(error is not None) for _, error in answers))  # the environment's answer
        self._check_limits()
        return [(text, error is not None) for text, error in answers]

    def _check_limits(self) -> None:
        """End the conversation inside the customer's turn when a limit is reached."""
        reason = self._counter.reached()
        if reason is not None:
            self._end = reason
            raise ConversationOver(reason)

    def _customer_call(self, name: str, arguments: dict[str, Any]) -> tuple[str, str | None, Any]:
        """Run one customer tool call unchecked, as upstream does, and record it (no step counted): the text the
        customer reads, the error message when it failed, and the tool's value."""
        assert self.world is not None and self.world.user is not None
        self._user_calls.append((len(self.tool_log), name, dict(arguments)))
        error: str | None = None
        result: Any = None
        handlers = self.world.user.handlers()
        if name not in handlers:
            error = f"Tool '{name}' not found."
        else:
            try:
                result = handlers[name](**arguments)
            except Exception as exc:  # a refusal, or an argument the tool cannot take: an error result, as upstream
                error = str(exc)
        text = tool_error_text(error) if error is not None else tool_result_text(result, SHAPES.get(self.data.domain, ()))
        self.tool_messages.append({"content": text, "error": error is not None, "requestor": "user"})
        return text, error, result

    def _calls_so_far(self) -> list[tuple[str, dict[str, Any]]]:
        """Every call in the order made: the pre-filled history's, then the agent's and the customer's interleaved."""
        calls = list(self._history_calls)
        pending = list(self._user_calls)
        for index, record in enumerate(self.tool_log):
            while pending and pending[0][0] <= index:
                calls.append(pending.pop(0)[1:])
            calls.append((record.name, record.arguments))
        calls.extend(call[1:] for call in pending)
        return calls

    def _history_messages(self) -> list[dict[str, Any]]:
        """The task's pre-filled conversation in OpenAI format (its tool calls were replayed by ``build_world``)."""
        history = (self._task.get("initial_state") or {}).get("message_history") or []
        out: list[dict[str, Any]] = []
        self._history_calls = []
        for message in history:
            role = message.get("role")
            if role == "tool":
                out.append({"role": "tool", "tool_call_id": str(message.get("id", "")), "content": str(message.get("content") or "")})
                continue
            entry: dict[str, Any] = {"role": role, "content": str(message.get("content") or "")}
            calls = message.get("tool_calls") or []
            if calls:
                entry["tool_calls"] = [ToolCall(c["name"], dict(c.get("arguments") or {}), str(c.get("id", ""))).to_openai() for c in calls]
                if role == "assistant":
                    self._history_calls.extend((c["name"], dict(c.get("arguments") or {})) for c in calls)
            out.append(entry)
        return out


def _names_only(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool schema that checks only which arguments a call names (required ones present, no unknown ones when the
    schema forbids them), not their JSON types or allowed values: upstream calls the tool's Python function with
    the arguments as they come, so a value of the wrong type is the tool's to answer (or to fail on)."""
    parameters = tool_parameters(tool)
    checked: dict[str, Any] = {"type": "object", "properties": {name: {} for name in parameters.get("properties") or {}}}
    for key in ("required", "additionalProperties"):
        if key in parameters:
            checked[key] = parameters[key] if key == "required" else bool(parameters[key])
    return {"type": "function", "function": {"name": (tool.get("function") or tool).get("name"), "parameters": checked}}


__all__ = ["END_TOKENS", "Tau2Env"]

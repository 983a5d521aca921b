"""``VitaBenchEnv``: VitaBench life-service tasks (delivery, in-store) with a simulated user.

Scoring: with a ``judge`` (a backend spec or a chat callable) the episode is scored as upstream
does, by the benchmark's sliding-window rubric judge (:mod:`.rubric_judge`); without one by the
state check (:mod:`.scoring`: the final database against the task's expected states), an
offline stand-in. ``info["scoring"]`` says which (``rubric_judge`` or ``state_check``);
``info["scorable"]`` is False when neither can score the episode (a subtask with rubrics only
and no judge, or a judge that failed). Both checks are reported (``vitabench_state``,
``vitabench_rubrics``).

Episodes follow upstream's orchestrator (version 1): the agent's system prompt is the policy
(``prompts/agent_system_prompt.yaml``) with ``{time}`` the task's time and weekday, and nothing
else (the agent must ask for or look up the user id); the history opens with upstream's
assistant greeting ("Hello, how can I help you?") before the user's first message; tool calls
are answered by :mod:`.tools` without schema validation, exactly as upstream answers them
(failures included). The step limit counts as upstream's orchestrator does: the user's opening
message, each agent message, each batch of tool results and each user reply is one step; at
``max_steps`` (300, upstream's setting) the episode ends with reward 0. Upstream also declares
``max_errors=10`` but never counts an error, so that limit can never end an episode; it is
kept here (``max_errors``) with the same effect: none. Upstream sends the agent's requests with no
token cap of its own (each model's config decides), so no reply is refused for its length there;
``eval_sampling_defaults`` allow 4096 new tokens, as for τ²-bench, and the env reads replies up to
that budget's worth of characters (:func:`~agentgym_suite.core.spaces.reply_char_limit`) instead of
the 8,192 characters of an env without a budget.

Departures from the leaderboard setting are reported by :meth:`leaderboard_departures` (the
state check instead of the rubric judge, the scripted user instead of the LLM user).

``version=2`` plays VitaBench 2.0 (:mod:`.sequences`): each task is one subtask of a user's
sequence. Before a subtask the user's memory (:mod:`.memory`) has ingested the interactions of
that subtask and of every earlier one of the same user, and nothing of any other user (the
memory is reset when the env moves to another user); the memory's read for the instruction
goes into the system prompt and its tools into the tool list. ``info`` reports
``sequence_id``, ``subtask_index``, ``skill_tested``, ``memory``, the memory text, the
subtask's reward (``vitabench_reward``) and, for retrieval memories, ``memory_settings``.
``agentgym eval`` writes upstream's subtask-level pass^k / pass@k / average@k (a crashed trial
counts 0) and the personalize/proactive split into ``summary.json`` (:mod:`.metrics`).
Subtasks of all three domains are played, OTA with 2.0's travel and taxi tools (:mod:`.ota_tools`),
and so are cross-domain subtasks (a domain such as ``delivery,ota``: every domain's tools over one
merged database, :mod:`.cross_domain`); 2.0's toolkits have no ``get_user_historical_behaviors``
and read products from the database, as upstream's. A subtask of any other domain is not played
(its interactions still reach the memory). Version-2 departures: such unplayed subtasks, a rewrite
memory with no model appends, and the retrieval memories do not embed with upstream's
``text-embedding-3-large`` (each named by :meth:`leaderboard_departures`).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from collections import Counter
from typing import Any, Callable, ClassVar, Sequence

from agentgym_suite.core.actions import ParsedAction, has_visible_text
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import StepOutcome, TaskStart
from agentgym_suite.core.tool_calls import ToolCall, parse_tool_calls
from agentgym_suite.core.tool_env import Conversation, ToolEnv, ToolRecord
from agentgym_suite.envs.shared.chat_models import LLM_PREFIX, BackendChat, chat_from
from agentgym_suite.envs.vitabench import data
from agentgym_suite.envs.vitabench.memory import Memory, make_memory, memory_departures, rewrite_on_agent_model
from agentgym_suite.envs.vitabench.metrics import personalization_metrics
from agentgym_suite.envs.vitabench.oracle import plan_calls
from agentgym_suite.envs.vitabench.personalization import agent_system_prompt
from agentgym_suite.envs.vitabench.rubric_judge import JudgeFn, judge_trajectory, rubric_list
from agentgym_suite.envs.vitabench.scoring import score_states
from agentgym_suite.envs.vitabench.sequences import load_sequences, playable, unplayable_reason
from agentgym_suite.envs.vitabench.tools import ToolKitBase, VitaTools
from agentgym_suite.envs.vitabench.user import GREETING, STOP, LLMUser, ScriptedUser, UserSimulator

ORACLE_CLOSING = "Everything you asked for is done. Is there anything else I can help with?"
CREATING_TOOLS = ("create_delivery_order", "create_instore_product_order", "instore_book", "instore_reservation",
                  "create_hotel_order", "create_attraction_order", "create_flight_order", "create_train_order")
"""Tools that create a record with a new id (2.0's ``create_taxi_order`` fails upstream before it assigns one)."""
WEEKDAYS = {"english": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
            "chinese": tuple(f"星期{d}" for d in "一二三四五六日")}


def clock_text(time: str, language: str) -> str:
    """The agent prompt's ``{time}``: the task's time and its weekday, as upstream's agent writes it."""
    return f"{time} {WEEKDAYS[language][datetime.strptime(time, '%Y-%m-%d %H:%M:%S').weekday()]}"


class VitaBenchEnv(ToolEnv):
    """VitaBench tasks over each task's embedded database.

    Args:
        domain: ``delivery`` (default) or ``instore`` (version 1; 2.0 subtasks carry their own).
        language: ``english`` (``tasks_en.json``, default) or ``chinese`` (``tasks.json``,
            upstream's default language); it also picks the prompts' language.
        max_steps: upstream's orchestrator step limit (300).
        max_errors: upstream's error limit (10; upstream never counts errors, see above).
        user: ``"scripted"`` (offline, default), ``"llm:<backend spec>"`` (upstream's LLM user),
            a :class:`~.user.UserSimulator`, or a chat callable ``(messages) -> str``.
        user_sampling: sampling options of an ``llm:`` user (``temperature``, ``max_new_tokens``, ``seed``).
        judge: the rubric judge: a backend spec or a chat callable ``(messages) -> str``; without it
            the state check scores the episode.
        version: 1 (``tasks_en.json`` of a domain) or 2 (the official 2.0 sequences).
        sequences_path: a 2.0 task file (default: see :func:`~.sequences.default_path`).
        memory: 2.0 memory backend: a name (``none``, ``full``, ``rewrite``, ``rewrite:<spec>``,
            ``bm25``, ``embedding``, ``groundtruth``; see :func:`~.memory.make_memory`) or a Memory.
        summarise: ``(previous, new_text) -> str`` writer for ``memory="rewrite"``.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``user_error``: str: why the simulated user failed (the episode then scores 0, as upstream).
        ``judge``: str: who graded the rubrics ('none' without a judge).
        ``scoring``: str, when the episode ended: rubric_judge or state_check.
        ``memory``: str, version 2: the memory backend the agent's memory came from.
        ``memory_settings``: dict, version 2, retrieval memories: the embedding model, chunking and cut-offs.
        ``subtask_index``: int, version 2: position of the subtask in its user's sequence.
        ``sequence_id``: str, version 2: the sequence (user) a subtask belongs to; evaluation's per-sequence metrics group episodes by it.
        ``skill_tested``: str, version 2: the skills the subtask tests, comma-separated.
        ``vitabench_domain``: str: the domain of the task.
        ``vitabench_reward``: float, version 2, when the episode ended: the subtask's reward.
        ``vitabench_state``: dict: whether the final state check passed, and its problems.
        ``vitabench_rubrics``: dict: the rubric judgements (or 'unscored' without a judge).
        ``vitabench_memory``: str, version 2: what earlier episodes of the same user left in memory, given to the agent.
        ``steps``: int: the orchestrator steps counted so far, as upstream counts them (each agent message, each batch of tool results, each user message).
    """

    benchmark: ClassVar[str] = "vitabench"
    eval_sampling_defaults: ClassVar[dict[str, Any]] = {"max_new_tokens": 4096}
    """Upstream's requests carry no token cap; 4096 new tokens a step (as τ²-bench's), which also sets the reply limit."""
    info_keys: ClassVar[dict[str, str]] = {
        "user_error": "str: why the simulated user failed (the episode then scores 0, as upstream).",
        "judge": "str: who graded the rubrics ('none' without a judge).",
        "scoring": "str, when the episode ended: rubric_judge or state_check.",
        "memory": "str, version 2: the memory backend the agent's memory came from.",
        "memory_settings": "dict, version 2, retrieval memories: embedding model, chunk size/overlap/unit, top_k, similarity threshold.",
        "sequence_id": "str, version 2: the sequence (user) a subtask belongs to; evaluation's per-sequence "
                       "metrics group episodes by it.",
        "subtask_index": "int, version 2: position of the subtask in its user's sequence.",
        "skill_tested": "str, version 2: the skills the subtask tests, comma-separated.",
        "vitabench_domain": "str: the domain of the task.",
        "vitabench_reward": "float, version 2, when the episode ended: the subtask's reward (upstream's subtask_N_reward).",
        "vitabench_state": "dict: whether the final state check passed, and its problems.",
        "vitabench_rubrics": "dict: the rubric judgements (or 'unscored' without a judge).",
        "vitabench_memory": "str, version 2: what earlier episodes of the same user left in memory, given to the agent.",
        "steps": "int: the orchestrator steps counted so far, as upstream counts them (each agent message, each batch "
                 "of tool results, each user message).",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(oracle_examples=15)
    label_keys: ClassVar[tuple[str, ...]] = ("judge", "scoring", "memory")
    user_setting: ClassVar[str] = "user"
    judge_setting: ClassVar[str] = "judge"

    @classmethod
    def with_agent_model(cls, kwargs: dict[str, Any], model: str | None) -> dict[str, Any]:
        """The shared user default, and a bare ``memory="rewrite"`` rewrites with the agent's model
        when the agent is one (upstream's rewrite memory uses the agent's model)."""
        filled = super().with_agent_model(kwargs, model)
        if "memory" in filled:
            filled["memory"] = rewrite_on_agent_model(filled["memory"], model)
        return filled

    @classmethod
    def sweeps(cls) -> list[Any]:
        """``--sweep memories:A,B`` (2.0 memory backends compared on the same sequences) and
        ``--sweep domains:A,B`` (one run per domain, each summary printed)."""
        return ["agentgym_suite.envs.vitabench.sweep:memories_sweep",
                "agentgym_suite.envs.vitabench.sweep:domains_sweep"]

    def __init__(
        self,
        *,
        domain: str = "delivery",
        language: str = "english",
        max_steps: int = 300,
        max_errors: int = 10,
        user: str | UserSimulator | Callable[[list[dict[str, Any]]], str] | None = None,
        user_sampling: dict[str, Any] | None = None,
        judge: str | JudgeFn | None = None,
        version: int = 1,
        sequences_path: str | Path | None = None,
        memory: str | Memory = "none",
        summarise: Callable[[str, str], str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.domain = data.check_domain(domain)
        self.language = data.check_language(language)
        self.max_steps = int(max_steps)
        self.max_errors = int(max_errors)
        self._steps = 0
        self._termination: str | None = None
        if version not in (1, 2):
            raise ValueError(f"version={version!r}; choose 1 or 2.")
        self.version = version
        self.unplayable: dict[str, str] = {}
        if version == 2:
            self.tasks = load_sequences(sequences_path)
            self.unplayable = {tid: unplayable_reason(t) for tid, t in self.tasks.items() if not playable(t)}
            self._ids = [tid for tid in self.tasks if tid not in self.unplayable]
        else:
            self.tasks = data.load_tasks(domain, self.language)
            self._ids = list(self.tasks)
        self.user, self.user_label = self._make_user(user, dict(user_sampling or {}))
        self.judge: JudgeFn | None = None
        self.judge_label = "none"
        if judge is not None:
            spec = judge[len(LLM_PREFIX):] if isinstance(judge, str) and judge.startswith(LLM_PREFIX) else judge
            self.judge, label = chat_from(spec, max_new_tokens=2048, role="judge")
            self.judge_label = f"llm:{label}" if isinstance(judge, str) else label
        self._judge_template: str | None = None
        self.memory = make_memory(memory, summarise)
        self.memory_label = str(getattr(self.memory, "name", type(self.memory).__name__))
        self._memory_at: tuple[str, int] | None = None
        self._agent_prompt = data.load_prompt("agent_system_prompt", self.language) if version == 1 else ""
        self._task: dict[str, Any] = {}
        self._vt: ToolKitBase | None = None
        self._result: dict[str, Any] | None = None
        self._memory_text = ""
        self._user_error: str | None = None

    def _make_user(self, user: Any, sampling: dict[str, Any]) -> tuple[UserSimulator, str]:
        """The simulated user and its label for a ``user`` setting."""
        if user is None or user == "scripted":
            return ScriptedUser(), "scripted"
        if isinstance(user, str):
            if not user.startswith(LLM_PREFIX) or not user[len(LLM_PREFIX):].strip():
                raise ValueError(f"user={user!r}; use 'scripted' or 'llm:<backend spec>' (e.g. 'llm:hf:Qwen/Qwen3-8B').")
            chat = BackendChat(spec=user, **{"role": "user", **sampling})
            simulated = LLMUser(chat, data.load_prompt("user_system_prompt", self.language), label=f"llm:{chat.label}", language=self.language)
            return simulated, simulated.label
        if hasattr(user, "reply") and hasattr(user, "start"):
            return user, str(getattr(user, "label", None) or f"custom:{type(user).__name__}")
        if callable(user):
            simulated = LLMUser(user, data.load_prompt("user_system_prompt", self.language), language=self.language)
            return simulated, simulated.label
        raise TypeError(f"user must be 'scripted', 'llm:<backend spec>', a UserSimulator or a chat callable; got {type(user).__name__}")

    def task_ids(self) -> list[str]:
        """Task ids (version 2: ``<sequence id>/<position>``, only the subtasks this suite can play)."""
        return list(self._ids)

    # ------------------------------------------------------------------ episode
    def _start_conversation(self, task_id: str) -> Conversation:
        self._task = self.tasks[task_id]
        env = dict(self._task["environment"])
        domain = str(self._task.get("domain", self.domain)) if self.version == 2 else self.domain
        if self.version == 2 and not env.get("user_id"):
            env["user_id"] = self._task.get("user_id", "")
        self._vt = VitaTools(task_id.replace("/", "_"), domain, env, self.language, version=self.version)
        self._result, self._user_error = None, None
        self._steps, self._termination = 0, None
        tools, handlers = list(self._vt.schemas), dict(self._vt.handlers)
        if self.version == 2:
            self._memory_text = self._memory_for(self._task)
            system = agent_system_prompt(self._task, self._memory_text)
            for tool in getattr(self.memory, "tools", lambda: [])():
                tools.append(tool.schema)
                handlers[tool.name] = tool.handler
        else:
            self._memory_text = ""
            system = self._agent_prompt.replace("{time}", clock_text(str(env.get("time", "")), self.language))
        try:
            first = str(self.user.start(self._task))
        except Exception as exc:  # a failing user model ends the episode at the first step, never crashes reset
            first, self._user_error = "", f"{type(exc).__name__}: {exc}"
        task_text = str(self._task.get("instruction") if self.version == 2 else self._task.get("instructions", ""))
        return Conversation(task=task_text, tools=tools, handlers=handlers, system_prompt=system, first_user_message=first)

    def _memory_for(self, task: dict[str, Any]) -> str:
        """Bring the memory to ``task``'s point of its user's sequence and read it with the instruction.

        The memory holds exactly the interactions of the user's subtasks up to this one: it is
        reset for another user (or an earlier point) and fed only the missing subtasks otherwise.
        """
        sequence, index = str(task["sequence_id"]), int(task["index"])
        if self._memory_at is None or self._memory_at[0] != sequence or self._memory_at[1] > index:
            reset = getattr(self.memory, "reset", None)
            if callable(reset):
                reset()
            start = 0
        else:
            start = self._memory_at[1] + 1
        for position in range(start, index + 1):
            self.memory.update(list(self.tasks[f"{sequence}/{position}"].get("interactions") or []))
        self._memory_at = (sequence, index)
        observe = getattr(self.memory, "observe_subtask", None)
        if callable(observe):
            observe(task)
        return str(self.memory.read(str(task.get("instruction", ""))))

    def _load_task(self, task_id: str) -> TaskStart:
        start = super()._load_task(task_id)
        if self.version == 1:  # upstream's orchestrator opens every conversation with the agent's greeting
            at = 1 if self.messages and self.messages[0].get("role") == "system" else 0
            self.messages.insert(at, {"role": "assistant", "content": GREETING[self.language]})
            start.extra["messages"] = list(self.messages)
        self._steps = 1 if start.observation else 0  # the user's opening message is upstream's first step
        start.extra["steps"] = self._steps
        return start

    def _step_limit_reached(self) -> bool:
        if self._steps >= self.max_steps:
            self._termination = "max_steps"
        return self._termination == "max_steps"

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self._user_error is not None:  # the simulated user failed to open the conversation
            return self._finish("The simulated user failed.", valid=True)
        message = parse_tool_calls(command)
        if message.has_tool_calls or has_visible_text(message.content):
            self._steps += 1  # the agent's message
            if self._step_limit_reached():  # upstream stops before answering the message
                assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
                if message.calls:
                    assistant["tool_calls"] = [c.to_openai() for c in message.calls]
                self.messages.append(assistant)
                return self._finish(f"The step limit ({self.max_steps}) was reached.", valid=True)
        outcome = super()._execute(command, parsed)
        if not outcome.terminated and self._step_limit_reached():
            return self._finish(f"The step limit ({self.max_steps}) was reached.", valid=outcome.action_valid)
        return outcome

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        self._steps += 1  # one batch of tool results
        return self._step_limit_reached()

    def execute_call(self, call: ToolCall) -> tuple[str, Any, str]:
        """Answer a call as upstream's environment does: no schema check, its failure texts.

        A call to a tool that does not exist gets upstream's answer and counts as an invalid action.
        """
        toolkit = self._vt
        if toolkit is None or (call.name not in toolkit.handlers and call.name in self._handlers):
            return super().execute_call(call)  # a 2.0 memory tool
        result = toolkit.call(call.name, **call.arguments)
        ok = not (isinstance(result, str) and result.startswith("Error: "))
        self.tool_log.append(ToolRecord(call.name, call.arguments, result, ok, self.turn))
        if call.name not in toolkit.handlers:  # upstream's answer, but a call to no tool is a malformed action
            return call.name, result, "invalid"
        return call.name, result, "ok" if ok else "error"

    def _user_reply(self, assistant_text: str) -> str | None:
        if STOP in assistant_text:
            return None
        try:
            reply = str(self.user.reply(list(self.messages)))
        except Exception as exc:  # a failing user model ends the episode (scored 0), never crashes it
            self._user_error = f"{type(exc).__name__}: {exc}"
            return None
        self._steps += 1  # the user's message
        self._step_limit_reached()
        if STOP in reply:
            self.messages.append({"role": "user", "content": reply})
            return None
        return reply

    @classmethod
    def benchmark_metrics(cls, final_infos: Sequence[dict[str, Any]], *, k: int | None = None) -> dict[str, Any]:
        """Version 2: upstream's subtask-level pass^k/pass@k/average@k and personalize/proactive split.

        A subtask's trials are its scored episodes in run order; the run's trial count is ``k``
        (the run's planned attempts, upstream's ``num_trials``), and a subtask with fewer scored
        episodes (a crashed or unscorable one) counts 0 for each missing trial, as upstream counts
        a failed trial (:mod:`.metrics`). Without ``k`` the count is the most trials any subtask
        had, which reads one fewer when an attempt crashed for every subtask.
        """
        rows, trials = [], Counter[tuple[str, int]]()
        for info in final_infos:
            if "vitabench_reward" not in info or "sequence_id" not in info:
                continue
            unit = (str(info["sequence_id"]), int(info["subtask_index"]))
            rows.append({"sequence_id": unit[0], "subtask_index": unit[1], "trial": trials[unit],
                         "reward": float(info["vitabench_reward"]), "skill_tested": info.get("skill_tested", "")})
            trials[unit] += 1
        return {"personalization": personalization_metrics(rows, num_trials=k)} if rows else {}

    def leaderboard_departures(self) -> list[str]:
        """Reasons this instance's scores are not comparable with VitaBench's leaderboard."""
        reasons = []
        if self.judge is None:
            reasons.append("scored by the state check (final orders against the expected states), not upstream's "
                           "rubric judge: pass judge=<model> to score as the leaderboard does")
        if self.user_label == "scripted":
            reasons.append("the simulated user is the offline scripted user, not upstream's LLM user: pass user='llm:<model>'")
        if self.version == 2:
            reasons.extend(memory_departures(self.memory))
            if self.unplayable:
                reasons.append(f"{len(self.unplayable)} subtask(s) are not played (no tools for their domain: "
                               f"{', '.join(sorted({str(self.tasks[t].get('domain')) for t in self.unplayable}))}), so the "
                               "subtask metrics cover fewer units than upstream's")
        return reasons

    def _evaluate(self) -> tuple[float, bool]:
        assert self._vt is not None
        criteria = self._task.get("evaluation_criteria") or {}
        states = criteria.get("expected_states") or []
        state_ok, problems = score_states(states, self._task["environment"], self._vt.db)
        rubrics: dict[str, Any] = {"scored": False, "reason": "unscored: no judge configured"}
        if self._termination == "max_steps":  # upstream scores a run cut off by its step limit 0
            scoring, scorable, reward = ("rubric_judge" if self.judge else "state_check"), True, 0.0
        elif self._user_error is not None:
            scoring, scorable, reward = ("rubric_judge" if self.judge else "state_check"), True, 0.0
        elif self.judge is not None:
            rubrics = judge_trajectory(self.judge, self._template(), criteria, self.messages,
                                       str(self._task.get("instruction") or self._task.get("instructions", "")),
                                       str(self._task["environment"].get("time", "")))
            scoring, scorable, reward = "rubric_judge", bool(rubrics["scored"]), float(rubrics["reward"])
        else:
            scoring, scorable, reward = "state_check", bool(states), float(state_ok and bool(states))
            if not states:
                problems = [f"no expected state to check; its {len(rubric_list(criteria))} rubric(s) need a judge"]
        reward = reward if scorable else 0.0
        self._result = {"state_passed": state_ok and bool(states), "state_problems": problems, "rubrics": rubrics,
                        "scoring": scoring, "scorable": scorable, "reward": reward}
        return reward, scorable and reward == 1.0

    def _template(self) -> str:
        if self._judge_template is None:
            self._judge_template = data.load_prompt("sliding_window_eval_template")
        return self._judge_template

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"vitabench_domain": str(self._task.get("domain", self.domain)) if self.version == 2 else self.domain,
                                "user_simulator": self.user_label, "judge": self.judge_label}
        if self._result is not None:
            info["vitabench_state"] = {"passed": self._result["state_passed"], "problems": self._result["state_problems"]}
            info["vitabench_rubrics"] = self._result["rubrics"]
            info["scoring"] = self._result["scoring"]
            info["scorable"] = self._result["scorable"]
        if self._user_error:
            info["user_error"] = self._user_error
        info["steps"] = self._steps
        if self._termination:
            info["termination"] = self._termination
        if self.version == 2 and self._task:
            if self._result is not None:
                info["vitabench_reward"] = self._result["reward"]
            settings = getattr(self.memory, "settings", None)
            if callable(settings):
                info["memory_settings"] = dict(settings())
            info.update(memory=self.memory_label, vitabench_memory=self._memory_text, sequence_id=self._task["sequence_id"],
                        subtask_index=int(self._task["index"]), skill_tested=",".join(self._task.get("skill_tested") or []))
        return info

    def success_criteria(self) -> list[str]:
        """The task's overall rubrics (the text a judge grades)."""
        rubrics = (self._task.get("evaluation_criteria") or {}).get("overall_rubrics") or []
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in rubrics]

    def oracle(self) -> list[str]:
        """Calls reaching the first expected state (ids of new records predicted), then a closing text."""
        if self._vt is None:
            return []
        states = (self._task.get("evaluation_criteria") or {}).get("expected_states") or []
        if not states:
            return [ORACLE_CLOSING]
        plan = plan_calls(self._vt.domain, states[0], self._task["environment"], self._vt.db)
        blocks: list[str] = []
        counters: dict[int, int] = {}  # per domain toolkit (a cross-domain task has several)
        for name, args, then in plan:
            blocks.append(_block(name, args))
            if name in CREATING_TOOLS:
                kit = self._vt.owner(name)
                counters[id(kit)] = counters.get(id(kit), kit._counter) + 1
                if then:
                    key = "book_id" if then == "pay_instore_book" else "order_id"
                    blocks.append(_block(then, {key: kit.predict_id(counters[id(kit)])}))
        return (["\n".join(blocks)] if blocks else []) + [ORACLE_CLOSING]


def _block(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"

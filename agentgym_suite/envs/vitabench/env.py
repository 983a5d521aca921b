"""``VitaBenchEnv``: VitaBench life-service tasks (delivery, in-store) with a simulated user.

Reward: 1 when the final database satisfies one of the task's expected states (see
:mod:`.scoring`). With a ``judge`` the task's overall rubrics are also graded and the reward is
1 only when both pass; without one ``info["vitabench_rubrics"]`` says ``unscored``. With
``version=2`` the env plays VitaBench 2.0 sub-task sequences and a memory carries what earlier
episodes of the same user said into the system prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, ClassVar

from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.vitabench import data
from agentgym_suite.envs.vitabench.judge import JudgeFn, judge_rubrics
from agentgym_suite.envs.vitabench.memory import Memory, make_memory
from agentgym_suite.envs.vitabench.oracle import plan_calls
from agentgym_suite.envs.vitabench.scoring import score_states
from agentgym_suite.envs.vitabench.sequences import default_path, load_sequences
from agentgym_suite.envs.vitabench.tools import VitaTools
from agentgym_suite.envs.vitabench.user import STOP, LLMUser, ScriptedUser, UserSimulator

ORACLE_CLOSING = "Everything you asked for is done. Is there anything else I can help with?"


class VitaBenchEnv(ToolEnv):
    """VitaBench tasks over each task's embedded database.

    Args:
        domain: ``delivery`` (default) or ``instore``.
        user: a :class:`~.user.UserSimulator`, or a chat callable ``(messages) -> str`` that
            plays the user with upstream's user prompt; default a :class:`~.user.ScriptedUser`.
        judge: chat callable ``(messages) -> str`` grading the overall rubrics; optional.
        version: 1 (tasks_en.json) or 2 (sub-task sequences, see :mod:`.sequences`).
        sequences_path: 2.0 sequences file (default ``$AGENTGYM_DATA/vitabench/v2/<domain>/sequences.json``).
        memory: ``none``, ``full``, ``rewrite``, ``bm25`` or a Memory object (version 2).
        summarise: ``(previous, new_text) -> str`` for ``memory="rewrite"``.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.
    """

    benchmark: ClassVar[str] = "vitabench"

    def __init__(
        self,
        *,
        domain: str = "delivery",
        user: UserSimulator | Callable[[list[dict[str, Any]]], str] | None = None,
        judge: JudgeFn | None = None,
        version: int = 1,
        sequences_path: str | Path | None = None,
        memory: str | Memory = "none",
        summarise: Callable[[str, str], str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.domain = data.check_domain(domain)
        if version not in (1, 2):
            raise ValueError(f"version={version!r}; choose 1 or 2.")
        self.version = version
        self.tasks = load_sequences(sequences_path or default_path(domain)) if version == 2 else data.load_tasks(domain)
        if user is None:
            user = ScriptedUser()
        elif not hasattr(user, "reply"):
            user = LLMUser(user, data.load_prompt("user_system_prompt"))  # type: ignore[arg-type]
        self.user: UserSimulator = user  # type: ignore[assignment]
        self.judge = judge
        self.memory = make_memory(memory, summarise)
        self._agent_prompt = data.load_prompt("agent_system_prompt")
        self._task: dict[str, Any] = {}
        self._vt: VitaTools | None = None
        self._result: dict[str, Any] | None = None
        self._memory_text = ""

    def task_ids(self) -> list[str]:
        """Task ids (version 2: ``<user_id>/<index>``)."""
        return list(self.tasks)

    def _start_conversation(self, task_id: str) -> Conversation:
        self._task = self.tasks[task_id]
        env = self._task["environment"]
        self._vt = VitaTools(task_id.replace("/", "_"), self.domain, env)
        self._result = None
        system = self._agent_prompt.replace("{time}", str(env.get("time", "")))
        system += f"\n\nThe user's id is {env.get('user_id', '')}."
        self._memory_text = self.memory.read(str(self._task.get("instructions", ""))) if self.version == 2 else ""
        if self._memory_text:
            system += "\n\n# What you remember about this user from earlier conversations\n" + self._memory_text
        first = self.user.start(self._task)
        return Conversation(task=str(self._task.get("instructions", "")), tools=self._vt.schemas,
                            handlers=self._vt.handlers, system_prompt=system, first_user_message=first)

    def _user_reply(self, assistant_text: str) -> str | None:
        if STOP in assistant_text:
            return None
        reply = self.user.reply(list(self.messages))
        if STOP in reply:
            self.messages.append({"role": "user", "content": reply})
            return None
        return reply

    def _evaluate(self) -> tuple[float, bool]:
        assert self._vt is not None
        criteria = self._task.get("evaluation_criteria") or {}
        state_ok, problems = score_states(criteria.get("expected_states") or [], self._task["environment"], self._vt.db)
        if self.judge is None:
            rubrics: dict[str, Any] = {"scored": False, "reason": "unscored: no judge configured"}
            won = state_ok
        else:
            rubrics = judge_rubrics(self.judge, criteria.get("overall_rubrics") or [], self.messages, self._vt.db)
            won = state_ok and rubrics["scored"] and rubrics["score"] == 1.0
        self._result = {"state_passed": state_ok, "state_problems": problems, "rubrics": rubrics}
        if self.version == 2:
            self.memory.update(list(self.messages))
        return float(won), won

    def _extra_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"vitabench_domain": self.domain}
        if self._result is not None:
            info["vitabench_state"] = {"passed": self._result["state_passed"], "problems": self._result["state_problems"]}
            info["vitabench_rubrics"] = self._result["rubrics"]
        if self.version == 2:
            info["vitabench_memory"] = self._memory_text
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
        plan = plan_calls(self.domain, states[0], self._task["environment"], self._vt.db)
        blocks, counter = [], self._vt._counter
        for name, args, then in plan:
            blocks.append(_block(name, args))
            if name in ("create_delivery_order", "create_instore_product_order", "instore_book", "instore_reservation"):
                counter += 1
                if then:
                    key = "book_id" if then == "pay_instore_book" else "order_id"
                    blocks.append(_block(then, {key: f"{self._vt.task_id}N{counter:02d}"}))
        return (["\n".join(blocks)] if blocks else []) + [ORACLE_CLOSING]


def _block(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"

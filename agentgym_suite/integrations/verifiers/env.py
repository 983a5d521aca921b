"""``Verifiers-v0``: a verifiers environment played as a suite text env, one model turn per ``step``.

``gym.make("Verifiers-v0", env="<installed verifiers environment>", **env_args)`` loads it with
``verifiers.load_environment(env, **env_args)`` (or takes a ``vf.Environment`` object as
``env``). Its tasks are the rows of the environment's evaluation dataset (``split="eval"``, the
default, falling back to the training dataset when it has none) or of its training dataset
(``split="train"``), with ids ``"0"``, ``"1"``, ...; its reward is the environment's own rubric
reward, paid when the rollout ends. The observation is the text of the messages the
environment added since the agent's last turn (the user prompt at reset; tool results as
``<tool_response>`` blocks); ``info["messages"]`` holds the whole conversation in OpenAI chat format
(the system prompt included) and ``info["tools"]`` the environment's tools as OpenAI schemas. An
action is the assistant message; when the environment has tools, ``<tool_call>`` blocks in it
become the message's tool calls.

A verifiers environment that raises, or gives no next turn within ``turn_timeout``, ends the
episode with :class:`~agentgym_suite.integrations.verifiers.stepped.VerifiersEpisodeError`;
an error the environment records itself (``state["error"]``) ends it with the rubric's reward and
``info["verifiers_error"]``.

What is not carried over: sampling arguments and token-level data (the suite's backend samples),
group rubrics' comparisons across a group (each episode is scored alone), and the
environment's own concurrency and server modes.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.core.tool_calls import render_tool_results
from agentgym_suite.core.tool_env import MessageFormat
from agentgym_suite.integrations.verifiers.stepped import DEFAULT_TURN_TIMEOUT_S, SteppedRollout, Turn

NOT_CARRIED_OVER = ("sampling arguments and token data; group rubrics compare no group (each episode is scored "
                    "alone); the environment's own concurrency and server modes")
"""What ``Verifiers-v0`` does not carry over (also in ``info["verifiers_not_carried_over"]`` at reset)."""


def message_dict(message: Any) -> dict[str, Any]:
    """A verifiers message (pydantic model or dict) as an OpenAI chat message dict."""
    raw = message.model_dump(exclude_none=True) if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": raw.get("role", "user"), "content": _text(raw.get("content"))}
    if raw.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id", ""), "type": "function",
                              "function": {"name": c.get("name", ""), "arguments": c.get("arguments", "{}")}}
                             for c in raw["tool_calls"]]
    if raw.get("tool_call_id"):
        out["tool_call_id"] = raw["tool_call_id"]
    return out


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else [content]:
        part = part.model_dump() if hasattr(part, "model_dump") else part
        parts.append(part.get("text", "") if isinstance(part, dict) else str(part))
    return "".join(parts)


def openai_tool(tool: Any) -> dict[str, Any]:
    """A ``vf.Tool`` as an OpenAI function schema."""
    raw = tool.model_dump() if hasattr(tool, "model_dump") else dict(tool)
    return {"type": "function", "function": {"name": raw["name"], "description": raw.get("description") or "",
                                             "parameters": raw.get("parameters") or {"type": "object", "properties": {}}}}


class VerifiersEnv(TextEnv):
    """A verifiers environment as a suite env (see the module docstring).

    Info keys of its own:

    * ``verifiers_env`` (str): the verifiers environment played (its id, or its class name).
    * ``verifiers_reward`` (float): at the end, the environment's rubric reward (unclipped).
    * ``verifiers_metrics`` (dict): at the end, the rubric's metrics.
    * ``verifiers_stop`` (str): at the end, the stop condition that ended the rollout.
    * ``verifiers_error`` (str): at the end, the error the environment recorded, if any.
    * ``verifiers_not_carried_over`` (str): at reset, what of verifiers this env does not use.

    Args:
        env: an installed verifiers environment's id (``verifiers.load_environment``), or a
            ``vf.Environment`` object.
        split: ``eval`` (default) or ``train``: which dataset of the environment gives the tasks.
        num_tasks: use only the first ``num_tasks`` rows (None: all).
        win_threshold: the reward at or above which an episode is ``won``.
        turn_timeout: seconds the environment may take between two model turns.
        **env_args: passed to ``verifiers.load_environment`` (an id only); suite settings
            (``action_format``, ``invalid_action``, ...) go to :class:`TextEnv`.
    """

    benchmark = "verifiers"
    default_action_format: ClassVar[str] = "message"
    copyable: ClassVar[bool] = False
    info_keys: ClassVar[dict[str, str]] = {
        "verifiers_env": "str: the verifiers environment played (its id, or its class name)",
        "verifiers_reward": "float, at the end: the environment's rubric reward (unclipped)",
        "verifiers_metrics": "dict, at the end: the rubric's metrics",
        "verifiers_stop": "str, at the end: the stop condition that ended the rollout",
        "verifiers_error": "str, at the end: the error the environment recorded, if any",
        "verifiers_not_carried_over": "str, at reset: what of verifiers the env does not use",
    }
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(needs_server=True)
    """Made over an installed verifiers environment only: tests/integrations/test_verifiers_env.py plays it."""

    _SUITE_KWARGS = ("action_format", "privileged", "invalid_action", "render_mode")

    def __init__(self, env: Any, *, split: str = "eval", num_tasks: int | None = None, win_threshold: float = 1.0,
                 turn_timeout: float = DEFAULT_TURN_TIMEOUT_S, **env_args: Any) -> None:
        suite = {k: env_args.pop(k) for k in self._SUITE_KWARGS if k in env_args}
        suite.setdefault("action_format", MessageFormat())
        super().__init__(**suite)
        if split not in ("eval", "train"):
            raise ValueError(f"split={split!r}; choose 'eval' or 'train'.")
        if isinstance(env, str):
            import verifiers as vf

            self.environment = vf.load_environment(env, **env_args)
            self.env_name = env
        else:
            if env_args:
                raise TypeError(f"env_args {sorted(env_args)} go to verifiers.load_environment; an environment "
                                "object is already made.")
            self.environment = env
            self.env_name = type(env).__name__
        self.prompt_description = f"the verifiers environment {self.env_name}"
        self.rows = self._rows(split, num_tasks)
        self.win_threshold = float(win_threshold)
        self.turn_timeout = float(turn_timeout)
        self._rollout: SteppedRollout | None = None
        self._messages: list[dict[str, Any]] = []
        self._with_tools = False

    def _rows(self, split: str, num_tasks: int | None) -> list[dict[str, Any]]:
        dataset = None
        if split == "eval":
            dataset = self.environment.get_eval_dataset() if _has(self.environment, "eval") else None
        if dataset is None:
            dataset = self.environment.get_dataset() if _has(self.environment, "train") else None
        if dataset is None:
            raise ValueError(f"the verifiers environment {self.env_name} has no dataset to take tasks from.")
        rows = [dict(row) for row in dataset]
        return rows[:num_tasks] if num_tasks is not None else rows

    # ------------------------------------------------------------------ suite API
    def task_ids(self) -> list[str]:
        return [str(i) for i in range(len(self.rows))]

    def oracle(self) -> list[str]:
        """The row's ``answer`` as the reply (verifiers rows carry the reference answer, not a solution)."""
        answer = self.rows[int(self.task_id or 0)].get("answer")
        if not answer:
            raise NotImplementedError(f"{self.env_name}'s task has no answer to play as an oracle.")
        return [str(answer)]

    # ------------------------------------------------------------------ TextEnv hooks
    def _load_task(self, task_id: str) -> TaskStart:
        self._end_rollout()
        row = self.rows[int(task_id)]
        self._rollout = SteppedRollout(self.environment, row, turn_timeout=self.turn_timeout)
        self._messages = []
        turn = self._rollout.start()
        if turn.done:
            return TaskStart("The verifiers environment ended before any turn.", str(row.get("prompt", "")),
                             extra=self._final_extra(turn))
        observation = self._absorb(turn)
        task = next((m["content"] for m in self._messages if m["role"] == "user"), observation)
        return TaskStart(observation, task, None, self._tools, {"messages": list(self._messages),
                                                                 "verifiers_env": self.env_name,
                                                                 "verifiers_not_carried_over": NOT_CARRIED_OVER})

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        assert self._rollout is not None
        turn = self._rollout.answer(command, self._with_tools)
        if turn.done:
            extra = self._final_extra(turn)
            reward = float(extra["verifiers_reward"])
            self._rollout = None
            score = min(1.0, max(0.0, reward))
            return StepOutcome("The episode has ended.", reward, score, reward >= self.win_threshold, True, extra=extra)
        observation = self._absorb(turn)
        return StepOutcome(observation, 0.0, 0.0, False, False,
                           extra={"messages": list(self._messages), "verifiers_env": self.env_name})

    def close(self) -> None:
        self._end_rollout()
        super().close()

    # ------------------------------------------------------------------ internals
    def _absorb(self, turn: Turn) -> str:
        """Take the prompt's new messages into the conversation; their text is the observation."""
        assert turn.prompt is not None
        messages = [message_dict(m) for m in turn.prompt]
        new = messages[len(self._messages):] if messages[:len(self._messages)] == self._messages else messages
        self._messages = messages
        self._with_tools = bool(turn.tools)
        self._tools = [openai_tool(t) for t in turn.tools] if turn.tools else None
        tool_results = [(m.get("tool_call_id", "tool"), m["content"]) for m in new if m["role"] == "tool"]
        texts = [m["content"] for m in new if m["role"] not in ("tool", "assistant", "system")]
        parts = ([render_tool_results(tool_results)] if tool_results else []) + texts
        return "\n".join(p for p in parts if p) or (messages[-1]["content"] if messages else "")

    def _final_extra(self, turn: Turn) -> dict[str, Any]:
        state = turn.state
        completion = [message_dict(m) for m in state.get("completion") or []]
        prompt = [message_dict(m) for m in state.get("prompt") or []]
        error = state.get("error")
        extra: dict[str, Any] = {
            "messages": prompt + completion,
            "verifiers_env": self.env_name,
            "verifiers_reward": float(state.get("reward") or 0.0),
            "verifiers_metrics": json.loads(json.dumps(state.get("metrics") or {}, default=str)),
            "verifiers_stop": str(state.get("stop_condition") or ""),
        }
        if error is not None:
            extra["verifiers_error"] = f"{type(error).__name__}: {error}"
        return extra

    def _end_rollout(self) -> None:
        rollout, self._rollout = self._rollout, None
        if rollout is not None:
            rollout.close()


def _has(environment: Any, which: str) -> bool:
    """Whether the environment has (or can build) its ``eval`` or ``train`` dataset."""
    if which == "eval":
        return environment.eval_dataset is not None or getattr(environment, "eval_dataset_source", None) is not None
    return environment.dataset is not None or getattr(environment, "dataset_source", None) is not None

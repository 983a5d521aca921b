"""Per-episode prompt state shared by the rollout engine and the model agent.

:class:`EpisodePrompt` turns an episode's observations into what a backend is sent:

* ``single`` — the verl-agent single user message (task, last ``history_length``
  observation/action pairs, current observation, admissible actions, format instructions),
  rendered with :func:`~agentgym_suite.core.prompts.render_single_prompt`;
* ``chat`` — the whole conversation as chat messages. Command envs get the layout of
  :func:`~agentgym_suite.core.prompts.render_chat_messages`; tool envs (whose ``info`` holds
  ``messages``) keep the env's own system/user/tool messages, and the assistant turns are
  the model's raw text (tool-call blocks included), never a re-rendering.

An env that renders its own prompts puts them in ``info["prompt_messages"]``; those are sent
as they are, in both modes (:attr:`EpisodePrompt.env_rendered`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentgym_suite.core.prompts import DEFAULT_HISTORY_LENGTH, HistoryStep, render_chat_messages, render_single_prompt

PROMPT_MODES = ("single", "chat")


def env_description(env: gym.Env | None) -> str:
    """How prompts name the env (its ``prompt_description`` or its class name)."""
    if env is None:
        return "a text environment"
    return getattr(env.unwrapped, "prompt_description", "") or f"the {type(env.unwrapped).__name__} environment"


def env_instructions(env: gym.Env | None) -> str:
    """The answer-format instructions of the env's action format ("" when unknown)."""
    fmt = getattr(env.unwrapped, "action_format", None) if env is not None else None
    return getattr(fmt, "instructions", "") or ""


class EpisodePrompt:
    """Prompt state of one episode.

    Args:
        mode: ``single`` or ``chat``.
        env: the env (for its description and action-format instructions); may be None.
        history_length: past turns shown in ``single`` prompts.
        system_prompt: replaces the default system message in ``chat`` mode (command envs).
        observation_role: role of environment replies in ``chat`` mode for command envs.
    """

    def __init__(
        self,
        mode: str = "single",
        *,
        env: gym.Env | None = None,
        history_length: int = DEFAULT_HISTORY_LENGTH,
        system_prompt: str | None = None,
        observation_role: str = "user",
    ) -> None:
        if mode not in PROMPT_MODES:
            raise ValueError(f"prompt mode {mode!r}; choose one of {PROMPT_MODES}.")
        if history_length < 0:
            raise ValueError(f"history_length must be >= 0, got {history_length}.")
        self.mode = mode
        self.history_length = history_length
        self.system_prompt = system_prompt
        self.observation_role = observation_role
        self.description = env_description(env)
        self.instructions = env_instructions(env)
        self.task = ""
        self.observation = ""
        self.history: list[HistoryStep] = []
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] | None = None
        self.admissible: list[str] | None = None
        self._env_messages = 0
        self.rendered: list[dict[str, Any]] | None = None
        self.truncation: str | None = None
        """``error`` when the env says its prompt must not be cut to fit (``info["prompt_truncation"]``)."""

    @property
    def env_rendered(self) -> bool:
        """True when the env supplies each turn's whole prompt (``info["prompt_messages"]``)."""
        return self.rendered is not None

    def start(self, observation: str, info: dict[str, Any]) -> None:
        """Begin an episode from the env's first observation and info."""
        self.task = str(info.get("task") or "")
        self.observation = observation
        self.history = []
        self.tools = _template_tools(info)
        self.admissible = info.get("admissible_actions")
        self.rendered = _rendered(info)
        self.truncation = info.get("prompt_truncation")
        env_messages = info.get("messages")
        if isinstance(env_messages, list) and env_messages:
            self.messages = [dict(m) for m in env_messages]
            self._env_messages = len(env_messages)
        else:
            self.messages = render_chat_messages(
                task=self.task, observations=[observation], actions=[], instructions=self.instructions,
                env_description=self.description, system_prompt=self.system_prompt,
            )
            self._env_messages = 0

    def prompt(self) -> list[dict[str, Any]]:
        """The chat messages to send for the current turn."""
        if self.rendered is not None:
            return [dict(m) for m in self.rendered]
        if self.mode == "chat":
            return [dict(m) for m in self.messages]
        text = render_single_prompt(
            task=self.task, observation=self.observation, history=self.history, admissible_actions=self.admissible,
            instructions=self.instructions, history_length=self.history_length, env_description=self.description,
        )
        return [{"role": "user", "content": text}]

    def record(self, action: str, observation: str, info: dict[str, Any],
               assistant: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Add the model's action and the env's answer; return the new non-assistant messages.

        The ``single`` prompt's history keeps the action the env reports as ``info["projected_action"]``
        (the extracted command, as verl-agent's history holds it) when there is one; ``chat`` keeps
        the whole completion, since the conversation is the model's own.

        ``assistant`` is the chat message to keep for the action when it is not the action's
        text: a server's reply with ``tool_calls`` (their ids are the ids the env's tool results
        answer).
        """
        projected = info.get("projected_action")
        if self.mode == "single" and isinstance(projected, str):
            action = projected  # verl-agent's history: the projected action, not the reasoning around it
        self.history.append(HistoryStep(self.observation, action))
        self.observation = observation
        if info.get("admissible_actions") is not None or self.admissible is not None:
            self.admissible = info.get("admissible_actions")
        if info.get("tools"):
            self.tools = _template_tools(info)
        self.rendered = _rendered(info)
        self.truncation = info.get("prompt_truncation")
        self.messages.append(dict(assistant) if assistant is not None else {"role": "assistant", "content": action})
        env_messages = info.get("messages")
        if isinstance(env_messages, list) and self._env_messages:
            new = [dict(m) for m in env_messages[self._env_messages + 1 :] if m.get("role") != "assistant"]
            self._env_messages = len(env_messages)
        else:
            new = [{"role": self.observation_role, "content": observation}]
        self.messages.extend(new)
        return new


def _rendered(info: dict[str, Any]) -> list[dict[str, Any]] | None:
    messages = info.get("prompt_messages")
    return [dict(m) for m in messages] if isinstance(messages, list) and messages else None


def _template_tools(info: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tool schemas a model's chat template (or an API request) is given: ``info["tools"]``, unless the
    env says its own messages already describe them (``info["tools_in_prompt"] is False``)."""
    if info.get("tools_in_prompt") is False:
        return None
    return info.get("tools") or None

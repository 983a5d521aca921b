"""Prompt rendering, kept apart from env dynamics.

Two views of the same episode:

* :func:`render_single_prompt` — the verl-agent layout the seed methods train with: one fresh
  user message per turn holding the task, the last ``history_length`` observation/action
  pairs as ``[Observation k: '…', Action k: '…']``, the current observation, the admissible
  actions and the answer-format instructions. The first turn has no history section.
* :func:`render_chat_messages` — the whole episode as chat messages (system, then alternating
  user observations and assistant actions) for full-history agents and tool envs.

:class:`PromptWrapper` applies either view to any env of the suite and keeps the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_suite.core.spaces import observation_space

DEFAULT_HISTORY_LENGTH = 2


@dataclass(frozen=True)
class HistoryStep:
    """One past turn: the observation the agent saw and the action it took."""

    observation: str
    action: str


def _env_description(env: gym.Env | None) -> str:
    if env is None:
        return "a text environment"
    return getattr(env.unwrapped, "prompt_description", "") or f"the {type(env.unwrapped).__name__} environment"


def render_single_prompt(
    *,
    task: str,
    observation: str,
    history: list[HistoryStep],
    admissible_actions: list[str] | None,
    instructions: str,
    history_length: int = DEFAULT_HISTORY_LENGTH,
    env_description: str = "a text environment",
) -> str:
    """Render the verl-agent style single-message prompt for the current turn."""
    lines = [f"You are an expert agent acting in {env_description}."]
    if task:
        lines.append(f"Your task is: {task}")
    steps_taken = len(history)
    shown = history[-history_length:] if history_length > 0 else []
    if shown:
        first = steps_taken - len(shown) + 1
        rendered = "\n".join(
            f"[Observation {first + i}: {step.observation!r}, Action {first + i}: {step.action!r}]"
            for i, step in enumerate(shown)
        )
        lines.append(
            f"You have taken {steps_taken} step(s) so far. The last {len(shown)} observation(s) and "
            f"the action(s) you took after each:\n{rendered}"
        )
        lines.append(f"This is step {steps_taken + 1}. Your current observation is: {observation}")
    else:
        lines.append(f"Your current observation is: {observation}")
    if admissible_actions:
        lines.append("The admissible actions now are: [" + ", ".join(repr(a) for a in admissible_actions) + "].")
    lines.append(instructions)
    return "\n".join(lines)


def render_chat_messages(
    *,
    task: str,
    observations: list[str],
    actions: list[str],
    instructions: str,
    env_description: str = "a text environment",
    system_prompt: str | None = None,
) -> list[dict[str, str]]:
    """Render the episode so far as chat messages; ``observations`` has one more item than ``actions``."""
    if len(observations) != len(actions) + 1:
        raise ValueError("render_chat_messages needs exactly one more observation than actions.")
    system = system_prompt or f"You are an expert agent acting in {env_description}. {instructions}"
    messages = [{"role": "system", "content": system}]
    first = observations[0] if not task else f"Your task is: {task}\n\n{observations[0]}"
    messages.append({"role": "user", "content": first})
    for action, observation in zip(actions, observations[1:]):
        messages.append({"role": "assistant", "content": action})
        messages.append({"role": "user", "content": observation})
    return messages


class PromptWrapper(gym.Wrapper[str, str, str, str]):
    """Replace each observation by the prompt a model should see, and keep the history.

    Args:
        env: any env of the suite.
        mode: ``single`` (verl-agent per-turn prompt) or ``chat`` (the observation is the
            newest user message and ``info["messages"]`` holds the whole conversation).
        history_length: turns of history in the ``single`` prompt (seeds: 2; Search: 4).

    The raw env observation stays available in ``info["raw_observation"]``.
    """

    def __init__(self, env: gym.Env[str, str], mode: str = "single", history_length: int = DEFAULT_HISTORY_LENGTH):
        super().__init__(env)
        if mode not in ("single", "chat"):
            raise ValueError(f"mode={mode!r}; choose 'single' or 'chat'.")
        if history_length < 0:
            raise ValueError(f"history_length must be >= 0, got {history_length}.")
        self.mode = mode
        self.history_length = history_length
        self.observation_space = observation_space()
        self._history: list[HistoryStep] = []
        self._observations: list[str] = []
        self._actions: list[str] = []
        self._task = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._history, self._observations, self._actions = [], [obs], []
        self._task = info.get("task", "")
        return self._render(obs, info), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        previous = self._observations[-1] if self._observations else ""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._history.append(HistoryStep(previous, action))
        self._observations.append(obs)
        self._actions.append(action)
        return self._render(obs, info), reward, terminated, truncated, info

    def _render(self, obs: str, info: dict[str, Any]) -> str:
        info["raw_observation"] = obs
        fmt = getattr(self.env.unwrapped, "action_format", None)
        instructions = getattr(fmt, "instructions", "")
        description = _env_description(self.env)
        if self.mode == "single":
            return render_single_prompt(
                task=self._task,
                observation=obs,
                history=self._history,
                admissible_actions=info.get("admissible_actions"),
                instructions=instructions,
                history_length=self.history_length,
                env_description=description,
            )
        messages = render_chat_messages(
            task=self._task,
            observations=self._observations,
            actions=self._actions,
            instructions=instructions,
            env_description=description,
        )
        info["messages"] = messages
        return messages[-1]["content"]

"""Prompt rendering, kept apart from env dynamics.

Two views of the same episode:

* :func:`render_single_prompt` — the verl-agent layout the seed methods train with: one fresh
  user message per turn holding the task, the last ``history_length`` observation/action
  pairs as ``[Observation k: '…', Action k: '…']``, the current observation, the admissible
  actions and the answer-format instructions. The first turn has no history section.
* :func:`render_chat_messages` — the whole episode as chat messages (system, then alternating
  user observations and assistant actions) for full-history agents and tool envs.

The rollout engine and the model agents keep an episode's prompt state with
:class:`~agentgym_suite.rollout.prompting.EpisodePrompt`, which calls these two functions.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_HISTORY_LENGTH = 2


@dataclass(frozen=True)
class HistoryStep:
    """One past turn: the observation the agent saw and the action it took."""

    observation: str
    action: str


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

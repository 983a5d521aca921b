"""How a generation backend plays an episode's turn: the one prompting path of training's
:class:`~agentgym_suite.rollout.policies.BackendPolicy` and evaluation's
:class:`~agentgym_suite.agents.model_agent.ModelAgent`.

* **Prompt.** :func:`open_prompt` starts an episode's :class:`~agentgym_suite.rollout.prompting.EpisodePrompt`
  from its first observation: the requested mode (``single`` or ``chat``), except that a tool env
  (its ``info`` carries ``tools``/``messages``) always gets the chat history with its tool schemas.
  :func:`render_prompt` is the exact text a backend with a chat template is fed.
* **Sampling seed.** :func:`turn_sampling_seed` gives each episode's turn a seed of its own, mixed
  from the run's sampling seed, the episode's reset seed, its member index (episodes that share a
  reset seed, as a GRPO group's do) and the turn; :func:`turn_sampling` sets a turn's
  ``SamplingParams`` from it. An episode samples the same in any batch.
* **Action.** :func:`parse_action` reads a sample back: its text, or, when a server returned
  ``tool_calls``, that assistant message as OpenAI JSON (the env answers each call under the
  server's id), with the message the history keeps for it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from agentgym_suite.llm.base import Backend, Sample, SamplingParams
from agentgym_suite.rollout.prompting import EpisodePrompt

__all__ = ["open_prompt", "parse_action", "render_prompt", "turn_sampling", "turn_sampling_seed", "uses_tools"]


def uses_tools(info: dict[str, Any]) -> bool:
    """True for a tool env's state (its ``info`` carries ``tools`` or ``messages``)."""
    return bool(info.get("tools") or info.get("messages"))


def open_prompt(mode: str, env: gym.Env | None, observation: str, info: dict[str, Any], *,
                history_length: int, system_prompt: str | None = None,
                observation_role: str = "user") -> EpisodePrompt:
    """An episode's prompt state, started from its first observation and info (``single`` becomes
    ``chat`` for a tool env: the model needs the conversation and the tool schemas)."""
    if mode == "single" and uses_tools(info):
        mode = "chat"
    prompt = EpisodePrompt(mode, env=env, history_length=history_length, system_prompt=system_prompt,
                           observation_role=observation_role)
    prompt.start(observation, info)
    return prompt


def render_prompt(backend: Backend, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The text ``backend`` is fed for ``messages``: its chat template's rendering, or the last
    message's content for a backend without one."""
    render: Callable[..., str] | None = getattr(backend, "render_prompt", None)
    if render is None:
        return messages[-1]["content"]
    return render(messages, tools)


def turn_sampling_seed(sampling_seed: int, episode_seed: int | None, turn: int, member: int = 0) -> int:
    """The 31-bit sampling seed of one episode's turn: a mix of the run's ``sampling_seed``, the
    episode's reset seed, its ``member`` index among episodes sharing that reset seed, and the turn."""
    key = [int(sampling_seed) & 0xFFFFFFFF, int(episode_seed or 0) & 0xFFFFFFFF, int(member) & 0xFFFFFFFF,
           int(turn) & 0xFFFFFFFF]
    return int(np.random.SeedSequence(key).generate_state(1)[0] & 0x7FFFFFFF)


def turn_sampling(sampling: SamplingParams, episodes: Sequence[tuple[int | None, int, int]]) -> SamplingParams:
    """A turn's sampling for several episodes, each ``(reset seed, member, turn)``: one seed per
    episode (``seeds``, :func:`turn_sampling_seed`), and for backends that take one seed only
    (``seed``) the first episode's. Unchanged when ``sampling`` has no seed (unseeded sampling)."""
    if sampling.seed is None:
        return sampling
    seeds = tuple(turn_sampling_seed(sampling.seed, seed, turn, member) for seed, member, turn in episodes)
    return replace(sampling, seed=seeds[0] if seeds else sampling.seed, seeds=seeds)


def parse_action(sample: Sample) -> tuple[str, dict[str, Any] | None]:
    """The action for a sample, and the assistant message the history keeps when it is not the
    action's text (a server's reply with ``tool_calls``; their ids are those the env answers)."""
    message = sample.message or {}
    calls = message.get("tool_calls")
    if not calls:
        return sample.text, None
    reply = {"role": "assistant", "content": message.get("content"), "tool_calls": list(calls)}
    return json.dumps(reply, ensure_ascii=False), reply

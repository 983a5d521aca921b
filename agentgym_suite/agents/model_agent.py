"""``ModelAgent``: an agent whose actions come from a generation backend.

Command envs (TextWorld, ALFWorld, ScienceWorld, WebShop, SearchQA) get the verl-agent
single-message prompt (``prompt_format="single"``) or the full chat history (``"chat"``); the
env's action format (plain, think_action, search) supplies the answer instructions and the
model's raw text is the action. Tool envs (their ``info`` carries ``tools``/``messages``)
always get the chat history with the tool schemas, and the raw assistant text — including any
``<tool_call>`` blocks — is the action.

``act_batch`` serves several envs in one backend call: ``reset_batch(envs)`` first, then one
observation and info per env.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import gymnasium as gym

from agentgym_suite.llm.base import Backend, BackendError, Sample, SamplingParams
from agentgym_suite.rollout.prompting import EpisodePrompt

PROMPT_FORMATS = ("single", "chat")
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


class _Slot:
    """Prompt state for one env the agent acts in."""

    def __init__(self, env: gym.Env | None, prompt: EpisodePrompt) -> None:
        self.env = env
        self.prompt = prompt
        self.started = False
        self.last_action: str | None = None


class ModelAgent:
    """Acts with a backend.

    Args:
        backend: any :class:`~agentgym_suite.llm.base.Backend` (see ``load_backend``).
        prompt_format: ``single`` (verl-agent prompt, history window) or ``chat`` (full history);
            tool envs always use ``chat``.
        temperature: sampling temperature (0 = greedy; 0.4 is the seeds' evaluation setting).
        top_p: nucleus mass.
        max_new_tokens: longest action in tokens.
        seed: sampling seed (offset per turn) for reproducible runs.
        history_length: turns of history in the ``single`` prompt.
        stop: stop strings (kept in the action text).
        system_prompt: system message for ``chat`` prompts on command envs.

    After each ``act`` the attribute ``last_turn`` holds ``prompt``, ``completion``,
    ``thinking``, ``completion_tokens``, ``finish_reason`` and the raw ``sample``.
    """

    name = "model"

    def __init__(
        self,
        backend: Backend,
        *,
        prompt_format: str = "single",
        temperature: float = 0.4,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        seed: int | None = None,
        history_length: int = 2,
        stop: Sequence[str] = (),
        system_prompt: str | None = None,
    ) -> None:
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format={prompt_format!r}; choose one of {PROMPT_FORMATS}.")
        self.backend = backend
        self.prompt_format = prompt_format
        self.sampling = SamplingParams(temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                                       seed=seed, stop=tuple(stop))
        self.history_length = history_length
        self.system_prompt = system_prompt
        self.name = f"model:{getattr(backend, 'name', type(backend).__name__)}"
        self.last_turn: dict[str, Any] | None = None
        self.last_turns: list[dict[str, Any]] = []
        self._slots: list[_Slot] = [self._slot(None)]
        self._turn = 0

    # ------------------------------------------------------------------ Agent protocol
    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Start a new episode in ``env``."""
        self.reset_batch([env], seed=seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Return the raw model text for the latest observation (raises BackendError on failure)."""
        if len(self._slots) != 1:
            raise ValueError(f"act() serves one env but reset_batch() set up {len(self._slots)}; use act_batch().")
        action = self.act_batch([observation], [info])[0]
        self.last_turn = self.last_turns[0]
        return action

    # ------------------------------------------------------------------ batched use
    def reset_batch(self, envs: Sequence[gym.Env], *, seed: int | None = None) -> None:
        """Start new episodes in several envs, served together by :meth:`act_batch`.

        ``seed`` seeds sampling for the whole batch (``seed + turn`` each turn) unless the agent
        was made with a ``seed`` of its own."""
        if not envs:
            raise ValueError("reset_batch() needs at least one env.")
        self._slots = [self._slot(env) for env in envs]
        self._turn = 0
        if seed is not None and self.sampling.seed is None:
            self._episode_seed: int | None = seed
        else:
            self._episode_seed = self.sampling.seed

    def act_batch(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        """One action per env, from a single backend call. A failed generation raises BackendError."""
        if len(observations) != len(self._slots) or len(infos) != len(self._slots):
            raise ValueError(
                f"act_batch() got {len(observations)} observations and {len(infos)} infos for "
                f"{len(self._slots)} envs; call reset_batch(envs) with the envs first."
            )
        for slot, observation, info in zip(self._slots, observations, infos):
            if not slot.started:
                if slot.prompt.mode == "single" and (info.get("tools") or info.get("messages")):
                    slot.prompt = self._prompt(slot.env, "chat")
                slot.prompt.start(observation, info)
                slot.started = True
            else:
                slot.prompt.record(slot.last_action or "", observation, info)
        prompts = [slot.prompt.prompt() for slot in self._slots]
        tools = [slot.prompt.tools for slot in self._slots]
        seed = getattr(self, "_episode_seed", self.sampling.seed)
        params = self.sampling if seed is None else SamplingParams(
            temperature=self.sampling.temperature, top_p=self.sampling.top_p,
            max_new_tokens=self.sampling.max_new_tokens, stop=self.sampling.stop, seed=seed + self._turn)
        rows = self.backend.generate(prompts, params, tools=tools)
        self._turn += 1
        actions: list[str] = []
        self.last_turns = []
        for slot, prompt, row in zip(self._slots, prompts, rows):
            sample: Sample = row[0]
            if not sample.ok:
                raise BackendError(f"{self.name} could not generate an action: {sample.error}")
            slot.last_action = sample.text
            actions.append(sample.text)
            thinking = _THINK.search(sample.text)
            self.last_turns.append({
                "prompt": prompt[-1]["content"] if slot.prompt.mode == "single" else _last_user(prompt),
                "completion": sample.text,
                "thinking": thinking.group(1).strip() if thinking else None,
                "completion_tokens": len(sample.completion_ids) if sample.has_token_ids else None,
                "finish_reason": sample.finish_reason,
                "sample": sample,
            })
        self.last_turn = self.last_turns[-1] if len(self.last_turns) == 1 else None
        return actions

    def keep_slots(self, indices: Sequence[int]) -> None:
        """Keep only the envs at ``indices`` (in that order), e.g. after the others finished."""
        self._slots = [self._slots[i] for i in indices]

    # ------------------------------------------------------------------ internals
    def _prompt(self, env: gym.Env | None, mode: str) -> EpisodePrompt:
        return EpisodePrompt(mode, env=env, history_length=self.history_length, system_prompt=self.system_prompt)

    def _slot(self, env: gym.Env | None) -> _Slot:
        return _Slot(env, self._prompt(env, self.prompt_format))


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "assistant":
            return str(message.get("content") or "")
    return ""

"""Multi-turn group rollouts for the trainer, with the exact token ids of every turn.

The trainer needs, for every agent turn, the token ids the model was conditioned on, the ids
and log-probs it generated, the raw env observation (GiGPO anchors), the env's response
(teacher context) and the role/position of the turn (SkillRise). :func:`collect_episodes`
steps all envs of a generation batch together and sends the pending prompts of one turn to
the backend in a single batched call.

Two prompt formats:

* ``single`` — each turn's prompt is a fresh user message (the env wrapped in
  ``PromptWrapper(mode="single")``), templated by the backend;
* ``chat`` — the conversation grows turn by turn **in token space**: the next prompt is the
  previous prompt ids + the generated ids + the ids of the env's reply as the chat template
  renders it. Nothing generated is re-tokenised, so a whole episode can be trained as one
  row with the env tokens masked out (``row_layout=trajectory``).

A failing env (an exception in ``reset`` or ``step``) ends that episode with an ``error``
and reward 0; the rest of the batch goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.core.prompts import PromptWrapper
from agentgym_suite.llm.base import SamplingParams


@dataclass
class TurnRecord:
    """One agent turn."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    text: str
    observation: str
    """Raw env observation the action answers (no history): GiGPO's anchor state."""
    reward: float = 0.0
    valid: bool = True
    response: str = ""
    """Raw env observation after the action (teacher context ``env_response``)."""
    role: str = "agent"
    position: int = 0
    oracle: list[str] | None = None
    env_ids: list[int] = field(default_factory=list)
    """Chat format: token ids of the env's reply appended after this completion."""
    finish_reason: str = "stop"
    simulator: list[dict[str, Any]] = field(default_factory=list)
    """Rehearsal envs: the world model's generations while answering this turn's tool calls
    (``info["simulator_generations"]`` of the step)."""


@dataclass
class Episode:
    """One rollout of one task."""

    group: int
    traj: int
    task_id: str
    seed: int
    task: str = ""
    family: str = ""
    turns: list[TurnRecord] = field(default_factory=list)
    ret: float = 0.0
    won: bool = False
    score: float = 0.0
    done: bool = False
    truncated: bool = False
    error: str | None = None
    position_rewards: dict[int, float] = field(default_factory=dict)
    """SkillRise: reward of the task at each position of the trial."""

    @property
    def invalid_count(self) -> int:
        """Number of invalid actions."""
        return sum(not t.valid for t in self.turns)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable summary with every turn's text (for the trajectory log)."""
        return {
            "group": self.group,
            "traj": self.traj,
            "task_id": self.task_id,
            "seed": self.seed,
            "task": self.task,
            "return": self.ret,
            "won": self.won,
            "score": self.score,
            "truncated": self.truncated,
            "error": self.error,
            "turns": [
                {
                    "role": t.role,
                    "position": t.position,
                    "observation": t.observation,
                    "action": t.text,
                    "reward": t.reward,
                    "valid": t.valid,
                    "prompt_tokens": len(t.prompt_ids),
                    "completion_tokens": len(t.completion_ids),
                    "finish_reason": t.finish_reason,
                    "simulator_generations": len(t.simulator),
                }
                for t in self.turns
            ],
        }


@dataclass
class EpisodeSpec:
    """What to roll out: task, env seed and ids of the group and trajectory."""

    task_id: str
    seed: int
    group: int
    traj: int


class _Slot:
    """One live env and the state of its episode."""

    def __init__(self, env: gym.Env, episode: Episode) -> None:
        self.env = env
        self.episode = episode
        self.prompt: Any = None
        self.ids: list[int] = []
        self.observation = ""
        self.info: dict[str, Any] = {}
        self.active = True


def collect_episodes(
    specs: Sequence[EpisodeSpec],
    make_env: Callable[[], gym.Env],
    backend: Any,
    params: SamplingParams,
    *,
    max_turns: int,
    prompt_format: str = "single",
    history_length: int = 2,
    max_prompt_tokens: int = 4096,
    want_oracle: bool = False,
    family_of: Callable[[str, str, dict[str, Any]], str] | None = None,
    envs: list[gym.Env] | None = None,
) -> list[Episode]:
    """Roll out one episode per spec, stepping all of them in lock-step.

    ``envs`` may hold envs to reuse (one per spec, already wrapped by ``wrap_env``); missing
    ones are created with ``make_env`` and appended.
    """
    if prompt_format not in ("single", "chat"):
        raise ValueError(f"prompt_format={prompt_format!r}; choose 'single' or 'chat'.")
    envs = envs if envs is not None else []
    while len(envs) < len(specs):
        envs.append(wrap_env(make_env(), prompt_format, history_length))
    slots: list[_Slot] = []
    for spec, env in zip(specs, envs):
        ep = Episode(group=spec.group, traj=spec.traj, task_id=str(spec.task_id), seed=spec.seed)
        slot = _Slot(env, ep)
        slots.append(slot)
        try:
            prompt, info = env.reset(seed=spec.seed, options={"task_id": spec.task_id})
        except Exception as err:  # a bad reset is data, not a crash of the batch
            ep.error = f"reset failed: {type(err).__name__}: {err}"
            slot.active = False
            continue
        ep.task = str(info.get("task", ""))
        ep.family = family_of(ep.task_id, ep.task, info) if family_of else ""
        _set_prompt(slot, prompt, info, backend, prompt_format, first=True)
    for _ in range(max_turns):
        live = [s for s in slots if s.active]
        if not live:
            break
        for s in live:
            if len(s.ids) > max_prompt_tokens:
                s.ids = s.ids[-max_prompt_tokens:]
        results = backend.generate_from_ids([s.ids for s in live], params)
        for slot, samples in zip(live, results):
            _advance(slot, samples[0], backend, prompt_format, want_oracle)
    for s in slots:
        if s.active:
            s.episode.truncated = True
            s.active = False
    return [s.episode for s in slots]


def wrap_env(env: gym.Env, prompt_format: str, history_length: int) -> gym.Env:
    """Add the prompt rendering the trainer expects (unless the env already renders prompts)."""
    if getattr(env, "renders_prompts", False):
        return env
    return PromptWrapper(env, mode=prompt_format, history_length=history_length)


def _set_prompt(slot: _Slot, prompt: str, info: dict[str, Any], backend: Any, fmt: str, *, first: bool) -> None:
    slot.observation = str(info.get("raw_observation", prompt))
    slot.info = info
    if "prompt_messages" in info:  # wrappers that build their own messages (SkillRise)
        slot.ids = backend.encode(backend.render_prompt(info["prompt_messages"], info.get("tools")))
        return
    if fmt == "single":
        slot.ids = backend.encode(backend.render_prompt([{"role": "user", "content": prompt}], info.get("tools")))
        return
    messages = info.get("messages") or [{"role": "user", "content": prompt}]
    if first:
        slot.ids = backend.encode(backend.render_prompt(messages, info.get("tools")))


def chat_reply_ids(backend: Any, messages: list[dict[str, Any]], completion_ids: Sequence[int], tools: Any = None) -> list[int]:
    """Token ids that follow a generated assistant turn when the env's reply is appended.

    ``messages`` ends with the assistant turn (its text) and the new user/tool message. The
    ids cover what the chat template puts after the assistant's content (its end-of-turn
    marker, unless the model generated it) and the rendered reply, up to the next
    generation prompt.
    """
    before = messages[:-2]
    assistant = messages[-2]
    prompt_text = backend.render_prompt(before, tools)
    with_assistant = backend.render_prompt(before + [assistant], tools, add_generation_prompt=False)
    full = backend.render_prompt(messages, tools)
    if not (full.startswith(with_assistant) and with_assistant.startswith(prompt_text)):
        raise ValueError(
            "the chat template does not render conversations prefix-consistently, so env tokens cannot be "
            "appended in token space; use prompt_format=single with row_layout=turn for this model."
        )
    rendered_turn = with_assistant[len(prompt_text):]
    content = str(assistant.get("content") or "").strip()
    cut = rendered_turn.rfind(content) + len(content) if content and content in rendered_turn else 0
    closing = rendered_turn[cut:]
    generated = backend.decode(list(completion_ids), skip_special_tokens=False)
    eos_text = getattr(backend.tokenizer, "eos_token", None) or ""
    if eos_text and generated.endswith(eos_text) and closing.startswith(eos_text):
        closing = closing[len(eos_text):]
    return backend.encode(closing + full[len(with_assistant):])


def _advance(slot: _Slot, sample: Any, backend: Any, fmt: str, want_oracle: bool) -> None:
    ep = slot.episode
    oracle = None
    if want_oracle:
        try:
            oracle = list(slot.env.unwrapped.oracle())
        except Exception:  # an env without an oracle gives no privileged text
            oracle = None
    turn = TurnRecord(
        prompt_ids=list(slot.ids),
        completion_ids=list(sample.completion_ids),
        logprobs=list(sample.logprobs),
        text=sample.text,
        observation=slot.observation,
        role=str(slot.info.get("role", "agent")),
        position=int(slot.info.get("position", 0)),
        oracle=oracle,
        finish_reason=sample.finish_reason,
    )
    ep.turns.append(turn)
    try:
        prompt, reward, terminated, truncated, info = slot.env.step(sample.text)
    except Exception as err:  # a crashing env ends this episode only
        ep.error = f"step failed: {type(err).__name__}: {err}"
        turn.valid = False
        slot.active = False
        return
    turn.reward = float(reward)
    turn.valid = bool(info.get("action_valid", True))
    turn.simulator = list(info.get("simulator_generations") or [])
    turn.response = str(info.get("raw_observation", prompt))
    ep.ret += float(reward)
    ep.won = bool(info.get("won", False))
    ep.score = float(info.get("score", 0.0) or 0.0)
    if "position_rewards" in info:
        ep.position_rewards = {int(k): float(v) for k, v in info["position_rewards"].items()}
    if terminated or truncated:
        ep.done = bool(terminated)
        ep.truncated = bool(truncated)
        slot.active = False
        return
    if fmt == "chat" and "prompt_messages" not in info:
        messages = info.get("messages")
        if not messages:
            raise ValueError("prompt_format=chat needs PromptWrapper(mode='chat') messages in info.")
        turn.env_ids = chat_reply_ids(backend, messages, sample.completion_ids, info.get("tools"))
        slot.ids = slot.ids + list(sample.completion_ids) + turn.env_ids
        slot.observation = str(info.get("raw_observation", prompt))
        slot.info = info
    else:
        _set_prompt(slot, prompt, info, backend, fmt, first=False)

"""``ModelAgent``: an agent whose actions come from a generation backend.

Command envs (TextWorld, ALFWorld, ScienceWorld, WebShop, SearchQA) get the verl-agent
single-message prompt (``prompt_format="single"``) or the full chat history (``"chat"``); the
env's action format (plain, think_action, search) supplies the answer instructions and the
model's raw text is the action. Tool envs (their ``info`` carries ``tools``/``messages``)
always get the chat history with the tool schemas, and the raw assistant text — including any
``<tool_call>`` blocks — is the action. When a server returns its own ``tool_calls``, the
action is that assistant message as OpenAI JSON (the env answers each call under the server's
id) and the history keeps it as ``tool_calls``, as the OpenAI API expects it sent back.

``act_batch`` serves several envs in one backend call: ``reset_batch(envs, seeds=)`` first, then
one observation and info per env. Each episode samples from its own seed per turn, so it plays the
same in any batch.

Prompts, sampling seeds and the reading of an action come from
:mod:`~agentgym_suite.rollout.model_turns`, the path the trainer's ``BackendPolicy`` takes too:
for the same observations both send a backend the same prompt and read the same action. A generation that fails fails only its own episode
(:class:`~agentgym_suite.agents.base.BatchActionError`).

Chat histories that outgrow the context window lose their oldest turns
(:func:`~agentgym_suite.rollout.context.fit_messages`): the window is ``max_context_tokens``,
or what the backend reports (an OpenAI-compatible server's ``max_model_len``), whichever is
smaller; a prompt the server still finds too long is trimmed further and sent again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.agents.base import BatchActionError
from agentgym_suite.llm.base import Backend, BackendError, Sample, SamplingParams
from agentgym_suite.llm.openai_wire import TokenEstimate, context_overflow
from agentgym_suite.rollout.context import fit_messages
from agentgym_suite.rollout.model_turns import open_prompt, parse_action, turn_sampling, turn_sampling_seed
from agentgym_suite.rollout.prompting import EpisodePrompt

PROMPT_FORMATS = ("single", "chat")
CONTEXT_RETRY_SHRINK = 0.8
"""Each time a server still finds a trimmed prompt too long, the token budget shrinks by this factor."""
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


class _Slot:
    """Prompt and sampling state for one env the agent acts in."""

    def __init__(self, env: gym.Env | None, prompt: EpisodePrompt, seed: int | None = None) -> None:
        self.env = env
        self.prompt = prompt
        self.seed = seed
        self.turn = 0
        self.started = False
        self.last_action: str | None = None
        self.reply: dict[str, Any] | None = None
        """The server's reply with ``tool_calls``, kept in the history instead of the action text."""


class ModelAgent:
    """Acts with a backend.

    Args:
        backend: any :class:`~agentgym_suite.llm.base.Backend` (see ``load_backend``).
        prompt_format: ``single`` (verl-agent prompt, history window) or ``chat`` (full history);
            tool envs always use ``chat``.
        temperature: sampling temperature (0 = greedy; 0.4 is the seeds' evaluation setting).
        top_p: nucleus mass.
        max_new_tokens: longest action in tokens.
        seed: the run's sampling seed, mixed with each episode's seed and turn
            (:func:`~agentgym_suite.rollout.model_turns.turn_sampling_seed`); episodes started
            without a seed of their own use it as theirs.
        history_length: turns of history in the ``single`` prompt.
        stop: stop strings (kept in the action text).
        system_prompt: system message for ``chat`` prompts on command envs.
        max_context_tokens: context window of the model, prompt and answer together; chat
            histories are trimmed to fit it (None: the backend's own window when it reports one,
            else no trimming).
        context_retries: how often a prompt the server rejects as too long is trimmed further
            and sent again.

    After each ``act`` the attribute ``last_turn`` holds ``prompt``, ``completion``,
    ``thinking``, ``completion_tokens``, ``finish_reason``, the raw ``sample`` and, from a
    server, ``request``, ``usage`` and ``tool_calls``; ``context_trimmed`` lists the turns left
    out of the prompt.
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
        max_context_tokens: int | None = None,
        context_retries: int = 2,
    ) -> None:
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format={prompt_format!r}; choose one of {PROMPT_FORMATS}.")
        if max_context_tokens is not None and max_context_tokens <= max_new_tokens:
            raise ValueError(f"max_context_tokens={max_context_tokens} leaves no room for a prompt next to "
                             f"max_new_tokens={max_new_tokens}; raise it or lower max_new_tokens.")
        self.backend = backend
        self.prompt_format = prompt_format
        self.sampling = SamplingParams(temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                                       seed=seed, stop=tuple(stop))
        self.history_length = history_length
        self.system_prompt = system_prompt
        self.max_context_tokens = max_context_tokens
        self.context_retries = max(0, int(context_retries))
        self.name = f"model:{getattr(backend, 'name', type(backend).__name__)}"
        self.last_turn: dict[str, Any] | None = None
        self.last_turns: list[dict[str, Any]] = []
        self._slots: list[_Slot] = [self._slot(None)]
        self._batch_seed: int | None = seed
        self._turn = 0
        self._estimate = TokenEstimate()
        self.prompt_formats: set[str] = set()
        """The prompt formats episodes were played with (``single`` turns into ``chat`` for a tool env)."""

    # ------------------------------------------------------------------ Agent protocol
    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Start a new episode in ``env``, sampled from ``seed`` (mixed with the turn)."""
        self.reset_batch([env], seeds=[seed])

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Return the raw model text for the latest observation (raises BackendError on failure)."""
        if len(self._slots) != 1:
            raise ValueError(f"act() serves one env but reset_batch() set up {len(self._slots)}; use act_batch().")
        try:
            action = self.act_batch([observation], [info])[0]
        except BatchActionError as exc:
            raise (exc.errors[0] or exc) from None
        self.last_turn = self.last_turns[0]
        return action

    # ------------------------------------------------------------------ batched use
    def reset_batch(self, envs: Sequence[gym.Env], *, seed: int | None = None,
                    seeds: Sequence[int | None] | None = None) -> None:
        """Start new episodes in several envs, served together by :meth:`act_batch`.

        ``seeds`` (one per env) gives each episode its own sampling seed per turn
        (:func:`~agentgym_suite.rollout.model_turns.turn_sampling_seed` of the agent's ``seed``,
        ``seeds[i]`` — the agent's own ``seed`` where an entry is None — and the turn), so an
        episode's actions do not depend on the batch. Without ``seeds``, ``seed`` (else the
        agent's ``seed``) seeds the batch as a whole, mixed with the turn."""
        if not envs:
            raise ValueError("reset_batch() needs at least one env.")
        if seeds is not None and len(seeds) != len(envs):
            raise ValueError(f"reset_batch() got {len(seeds)} seeds for {len(envs)} envs; give one per env.")
        own = self.sampling.seed
        if seeds is None:
            self._slots = [self._slot(env) for env in envs]
            self._batch_seed = seed if seed is not None else own
        else:
            self._slots = [self._slot(env, s if s is not None else own) for env, s in zip(envs, seeds)]
            self._batch_seed = None
        self._turn = 0

    def act_batch(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        """One action per env, from a single backend call.

        Raises:
            BatchActionError: when some envs got no action (the others' actions are in it).
        """
        if len(observations) != len(self._slots) or len(infos) != len(self._slots):
            raise ValueError(
                f"act_batch() got {len(observations)} observations and {len(infos)} infos for "
                f"{len(self._slots)} envs; call reset_batch(envs) with the envs first."
            )
        for slot, observation, info in zip(self._slots, observations, infos):
            if not slot.started:
                slot.prompt = open_prompt(self.prompt_format, slot.env, observation, info,
                                          history_length=self.history_length, system_prompt=self.system_prompt)
                slot.started = True
                self.prompt_formats.add(slot.prompt.mode)
            else:
                slot.prompt.record(slot.last_action or "", observation, info, assistant=slot.reply)
        samples, prompts, trimmed = self._generate(self._params())
        self._turn += 1
        actions: list[str | None] = []
        errors: list[BaseException | None] = []
        self.last_turns = []
        for slot, prompt, sample, left_out in zip(self._slots, prompts, samples, trimmed):
            if not sample.ok:
                actions.append(None)
                errors.append(BackendError(f"{self.name} could not generate an action: {sample.error}"))
                self.last_turns.append({})
                continue
            action, slot.reply = parse_action(sample)
            slot.last_action = action
            slot.turn += 1
            actions.append(action)
            errors.append(None)
            self.last_turns.append(self._report(slot, prompt, sample, action, left_out))
        self.last_turn = self.last_turns[-1] if len(self.last_turns) == 1 else None
        if any(e is not None for e in errors):
            raise BatchActionError(actions, errors)
        return actions  # type: ignore[return-value]

    def keep_slots(self, indices: Sequence[int]) -> None:
        """Keep only the envs at ``indices`` (in that order), e.g. after the others finished."""
        self._slots = [self._slots[i] for i in indices]

    # ------------------------------------------------------------------ generation
    def _params(self) -> SamplingParams:
        """This turn's sampling: each episode's own seed, or the batch seed, mixed with the turn
        (:func:`~agentgym_suite.rollout.model_turns.turn_sampling`; an episode is member 0 of its
        seed: every attempt of an evaluation has a reset seed of its own)."""
        if any(slot.seed is not None for slot in self._slots):
            run = replace(self.sampling, seed=self.sampling.seed if self.sampling.seed is not None else 0)
            return turn_sampling(run, [(slot.seed, 0, slot.turn) for slot in self._slots])
        if self._batch_seed is None:
            return replace(self.sampling, seed=None)
        return replace(self.sampling, seed=turn_sampling_seed(self._batch_seed, None, self._turn))

    def _generate(self, params: SamplingParams) -> tuple[list[Sample], list[list[dict[str, Any]]], list[list[int]]]:
        """One backend call for every slot; prompts the server finds too long are trimmed further
        and sent again. Returns each slot's sample, the prompt sent and the turns left out of it."""
        shrink = 1.0
        fitted = [self._fit(slot, shrink) for slot in self._slots]
        prompts = [p for p, _ in fitted]
        trimmed = [t for _, t in fitted]
        tools = [slot.prompt.tools for slot in self._slots]
        samples = [row[0] for row in self.backend.generate(prompts, params, tools=tools)]
        for _ in range(self.context_retries):
            again = [i for i, s in enumerate(samples) if not s.ok and context_overflow(s.error or "") is not None
                     and self._slots[i].prompt.mode == "chat" and not self._slots[i].prompt.env_rendered]
            if not again:
                break
            shrink *= CONTEXT_RETRY_SHRINK
            for i in again:
                prompts[i], trimmed[i] = self._fit(self._slots[i], shrink, force=True)
            subset = params if params.seeds is None else replace(params, seeds=tuple(params.seeds[i] for i in again))
            rows = self.backend.generate([prompts[i] for i in again], subset, tools=[tools[i] for i in again])
            for i, row in zip(again, rows):
                samples[i] = row[0]
        return samples, prompts, trimmed

    def _fit(self, slot: _Slot, shrink: float, *, force: bool = False) -> tuple[list[dict[str, Any]], list[int]]:
        """The slot's prompt within the context window, and the turns left out."""
        messages = slot.prompt.prompt()
        if slot.prompt.mode != "chat" or slot.prompt.env_rendered:
            return messages, []
        window = self._window()
        if window is None and not force:
            return messages, []
        count = self._counter(slot.prompt.tools)
        if window is None:  # the server rejected the prompt without saying its window: shrink what it was
            window = count(messages) + self.sampling.max_new_tokens
        budget = max(1, int((window - self.sampling.max_new_tokens) * shrink))
        return fit_messages(messages, budget, count)

    def _window(self) -> int | None:
        reported = getattr(self.backend, "context_window", None)
        served = reported() if callable(reported) else None
        known = [w for w in (self.max_context_tokens, served) if isinstance(w, int) and w > 0]
        return min(known) if known else None

    def _counter(self, tools: list[dict[str, Any]] | None) -> Callable[[list[dict[str, Any]]], int]:
        """How many prompt tokens a message list takes: the backend's count, or its template and
        tokenizer, or an estimate from characters."""
        backend: Any = self.backend
        if callable(getattr(backend, "count_tokens", None)):
            return lambda messages: int(backend.count_tokens(messages, tools))
        if callable(getattr(backend, "render_prompt", None)) and callable(getattr(backend, "encode", None)):
            return lambda messages: len(backend.encode(backend.render_prompt(messages, tools)))
        return lambda messages: self._estimate.count(messages, tools)

    # ------------------------------------------------------------------ internals
    def _report(self, slot: _Slot, prompt: list[dict[str, Any]], sample: Sample, action: str,
                trimmed: list[int]) -> dict[str, Any]:
        thinking = _THINK.search(sample.text)
        usage = sample.usage or {}
        tokens = len(sample.completion_ids) if sample.has_token_ids else usage.get("completion_tokens")
        return {
            "prompt": prompt[-1]["content"] if slot.prompt.mode == "single" else _last_user(prompt),
            "completion": action,
            "thinking": thinking.group(1).strip() if thinking else None,
            "completion_tokens": tokens if isinstance(tokens, int) else None,
            "finish_reason": sample.server_finish_reason or sample.finish_reason,
            "sample": sample,
            "request": sample.request,
            "usage": sample.usage,
            "tool_calls": (sample.message or {}).get("tool_calls"),
            "context_trimmed": trimmed or None,
        }

    def _slot(self, env: gym.Env | None, seed: int | None = None) -> _Slot:
        prompt = EpisodePrompt(self.prompt_format, env=env, history_length=self.history_length,
                               system_prompt=self.system_prompt)  # replaced by open_prompt at the first observation
        return _Slot(env, prompt, seed)


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "assistant":
            return str(message.get("content") or "")
    return ""

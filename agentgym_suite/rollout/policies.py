"""What the rollout engine asks for actions: a policy, called once per turn for every running episode.

* :class:`BackendPolicy` — a generation backend (transformers, vLLM, an OpenAI-compatible
  endpoint). The engine's side keeps each episode's prompt (``single`` or ``chat``) and, with a
  token backend in ``chat`` mode, its exact token sequence; all prompts of a turn go to the
  backend in one batched call. Turns carry token ids and log-probs: what a trainer needs.
* :class:`AgentPolicy` — an agent (``agentgym_suite.agents``): anything with ``reset(env, seed=)``
  and ``act(observation, info)``, which plays one episode at a time, or a *batched* agent with
  ``reset_batch(envs, seed=)``, ``act_batch(observations, infos)`` and ``keep_slots(indices)``,
  which plays many in lockstep with one call per turn. The agent keeps its own prompts; turns
  carry the text it reports (``last_turn`` / ``last_turns``: ``prompt``, ``thinking``,
  ``completion_tokens``). What evaluation runs.

Seeds: every episode samples from a seed of its own, so it plays the same whatever batch it is in.
A backend policy with ``sampling.seed`` set gives each prompt of a turn the seed
:func:`~agentgym_suite.rollout.model_turns.turn_sampling_seed` derives from that seed, the
episode's reset seed, its attempt (the member of its group) and the turn (``SamplingParams.seeds``);
the model agent derives its seeds with the same function. A one-at-a-time agent is reset with its episode's own seed; a batched
agent whose ``reset_batch`` takes ``seeds`` gets one per episode, and an older one the seed of the
first episode whose env reset (its actions then depend on the other episodes of its batch, unless
it decodes greedily).

:func:`make_policy` wraps a backend or an agent in the right class.
"""

from __future__ import annotations

import inspect
import operator
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, Sequence

from agentgym_suite.core.errors import BatchActionError
from agentgym_suite.llm.base import Backend, Sample, SamplingParams
from agentgym_suite.rollout.chat_tokens import TokenConversation
from agentgym_suite.rollout.episodes import Decision, Failure, LiveEpisode, describe_error
from agentgym_suite.rollout.model_turns import open_prompt, parse_action, render_prompt, turn_sampling
from agentgym_suite.rollout.prompting import PROMPT_MODES, EpisodePrompt
from agentgym_suite.rollout.records import Turn
from agentgym_suite.rollout.request_log import RequestLog


AGENT_MODE = "agent"
"""``Trajectory.mode`` of episodes played by an agent (it keeps its own prompts)."""

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


class Policy(Protocol):
    """What the engine calls, in this order: ``start`` once, then per turn ``act`` for the running
    episodes, ``observe`` for each that goes on, and ``finish`` for each that ended.

    Attributes:
        mode: written to ``Trajectory.mode``.
        max_episodes: most episodes one run may hold (None: no limit).
    """

    mode: str
    max_episodes: int | None

    def start(self, episodes: Sequence[LiveEpisode]) -> list[Failure | None]:
        """Begin the episodes whose env reset (``observation``/``info`` hold the first state)."""
        ...

    def act(self, episodes: Sequence[LiveEpisode], turn: int) -> list[Decision | Failure]:
        """One decision (or failure) per running episode, from one call."""
        ...

    def observe(self, episode: LiveEpisode, decision: Decision) -> None:
        """Take in the env's answer to ``decision`` (``episode.observation``/``info`` hold it);
        raising fails the episode at stage ``tokenise``."""
        ...

    def finish(self, episode: LiveEpisode) -> None:
        """Write what the policy kept about a finished episode onto its trajectory."""
        ...


def takes_seeds(agent: Any) -> bool:
    """True when the agent's ``reset_batch`` takes ``seeds`` (one per env)."""
    try:
        params = inspect.signature(agent.reset_batch).parameters
    except (TypeError, ValueError):
        return False
    return "seeds" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def supports_batches(agent: Any) -> bool:
    """True for agents that serve several envs with one call (``reset_batch``, ``act_batch``, ``keep_slots``)."""
    return all(callable(getattr(agent, name, None)) for name in ("reset_batch", "act_batch", "keep_slots"))


def is_agent(obj: Any) -> bool:
    """True for objects an :class:`AgentPolicy` can drive."""
    return supports_batches(obj) or (callable(getattr(obj, "reset", None)) and callable(getattr(obj, "act", None)))


def make_policy(policy: Any, **backend_settings: Any) -> Any:
    """A policy for ``policy``: returned as is when it already is one, a :class:`BackendPolicy` for a
    generation backend (``backend_settings`` are its keyword arguments), an :class:`AgentPolicy` for
    an agent.

    Raises:
        ValueError: ``backend_settings`` given with an agent (it makes its own prompts).
        TypeError: ``policy`` is neither.
    """
    if isinstance(policy, (BackendPolicy, AgentPolicy)):
        if backend_settings:
            raise ValueError(f"{sorted(backend_settings)} configure a generation backend; set them on the policy.")
        return policy
    if callable(getattr(policy, "generate", None)):
        return BackendPolicy(policy, **backend_settings)
    if is_agent(policy):
        if backend_settings:
            raise ValueError(
                f"{sorted(backend_settings)} configure a generation backend, but {type(policy).__name__} is an agent: "
                "it makes its own prompts and samples itself; set those on the agent."
            )
        return AgentPolicy(policy)
    raise TypeError(
        f"{type(policy).__name__} is neither a generation backend (generate(prompts, params)) nor an agent "
        "(reset(env, seed=) and act(observation, info), or reset_batch/act_batch/keep_slots)."
    )


# ---------------------------------------------------------------------------------- backends
@dataclass
class _Conversation:
    """A backend policy's state of one episode."""

    prompt: EpisodePrompt
    tokens: TokenConversation | None = None
    pending_ids: list[int] = field(default_factory=list)
    pending_text: str = ""
    rendered: str | None = None
    """This turn's prompt text as rendered for generation (rendered once, reused for the record)."""
    requests: RequestLog = field(default_factory=RequestLog)
    """The requests sent to a server for this episode, compacted for its record."""
    reply: dict[str, Any] | None = None
    """The last reply with ``tool_calls``, kept in the history instead of the action text."""


class BackendPolicy:
    """A generation backend as the engine's policy.

    Args:
        backend: any :class:`~agentgym_suite.llm.base.Backend`.
        mode: ``single`` (verl-agent per-turn prompt with a history window) or ``chat``
            (full history; with a token backend the episode's token ids are built
            incrementally with a model-token mask).
        sampling: sampling settings (``n`` must be 1: groups are separate envs). The seed,
            if set, is offset by the turn index each turn.
        history_length: history window of the ``single`` prompt.
        system_prompt: system message for ``chat`` mode on command envs.
        observation_role: role of env replies in ``chat`` mode on command envs.
        max_prompt_tokens: with a token backend, prompts longer than this lose their oldest
            tokens before generation (None: no limit); a prompt the env marks
            ``info["prompt_truncation"] = "error"`` fails its episode instead.
    """

    max_episodes: int | None = None

    def __init__(
        self,
        backend: Backend,
        *,
        mode: str = "single",
        sampling: SamplingParams | None = None,
        history_length: int = 2,
        system_prompt: str | None = None,
        observation_role: str = "user",
        max_prompt_tokens: int | None = None,
    ) -> None:
        if mode not in PROMPT_MODES:
            raise ValueError(f"mode={mode!r}; choose one of {PROMPT_MODES}.")
        sampling = sampling or SamplingParams()
        if sampling.n != 1:
            raise ValueError("RolloutEngine needs sampling.n == 1; use group_size for several rollouts per task.")
        if max_prompt_tokens is not None and max_prompt_tokens < 1:
            raise ValueError(f"max_prompt_tokens must be >= 1 or None, got {max_prompt_tokens}.")
        self.backend = backend
        self.mode = mode
        self.sampling = sampling
        self.history_length = history_length
        self.system_prompt = system_prompt
        self.observation_role = observation_role
        self.max_prompt_tokens = max_prompt_tokens

    @property
    def token_mode(self) -> bool:
        """True when ``chat`` trajectories carry incremental token ids."""
        return self.mode == "chat" and self._token_backend

    @property
    def _token_backend(self) -> bool:
        return bool(getattr(self.backend, "supports_token_prompts", False))

    def start(self, episodes: Sequence[LiveEpisode]) -> list[Failure | None]:
        """Build each episode's prompt (and, in token mode, its opening token ids)."""
        return [self._start(episode) for episode in episodes]

    def _start(self, episode: LiveEpisode) -> Failure | None:
        try:
            prompt = open_prompt(self.mode, episode.env, episode.observation, episode.info,
                                 history_length=self.history_length, system_prompt=self.system_prompt,
                                 observation_role=self.observation_role)
            conversation = episode.context = _Conversation(prompt)
            if self.token_mode and prompt.mode == "chat" and not prompt.env_rendered:
                conversation.tokens = TokenConversation(self.backend, prompt.prompt(), prompt.tools)  # type: ignore[arg-type]
                conversation.pending_ids = list(conversation.tokens.token_ids)
                conversation.pending_text = self.backend.decode(conversation.pending_ids, skip_special_tokens=False)  # type: ignore[attr-defined]
        except Exception as exc:  # an unusable prompt fails its episode, not the batch
            return Failure("tokenise", describe_error(exc))
        return None

    def act(self, episodes: Sequence[LiveEpisode], turn: int) -> list[Decision | Failure]:
        """Generate for every episode in one batched call; a failed call is retried prompt by prompt
        (each prompt with its own seed, so a retried episode samples as it would have in the batch)."""
        params = self._params(episodes, turn)
        try:
            samples = self._call(episodes, params)
        except Exception:  # find the prompt that broke the batch; the others still run
            samples = []
            for index, episode in enumerate(episodes):
                try:
                    own = params if params.seeds is None else replace(params, seeds=(params.seeds[index],))
                    samples.extend(self._call([episode], own))
                except Exception as exc:
                    samples.append(Sample(text="", finish_reason="error", has_token_ids=False, error=describe_error(exc)))
        return [self._decision(episode, sample, turn) for episode, sample in zip(episodes, samples)]

    def _params(self, episodes: Sequence[LiveEpisode], turn: int) -> SamplingParams:
        """The turn's sampling: one seed per episode (:func:`~agentgym_suite.rollout.model_turns.turn_sampling`
        of its reset seed, attempt and the turn)."""
        return turn_sampling(self.sampling, [(e.spec.seed, e.spec.attempt, turn) for e in episodes])

    def _decision(self, episode: LiveEpisode, sample: Sample, turn: int) -> Decision | Failure:
        if not sample.ok:
            return Failure("generate", sample.error or "unknown error")
        conversation: _Conversation = episode.context
        if conversation.tokens is not None:
            prompt_ids, prompt_text = conversation.pending_ids, conversation.pending_text
            conversation.tokens.add_completion(sample)
        else:
            prompt_ids = list(sample.prompt_ids)
            prompt_text = conversation.rendered
            if prompt_text is None:
                prompt_text = render_prompt(self.backend, conversation.prompt.prompt(), conversation.prompt.tools)
            conversation.rendered = None
        action, conversation.reply = parse_action(sample)
        record = Turn(index=turn, prompt_text=prompt_text, completion_text=action, prompt_ids=prompt_ids,
                      completion_ids=list(sample.completion_ids), logprobs=list(sample.logprobs),
                      finish_reason=sample.finish_reason,
                      completion_tokens=len(sample.completion_ids) if sample.has_token_ids else None,
                      request=conversation.requests.compact(sample.request), usage=sample.usage)
        return Decision(action, record)

    def observe(self, episode: LiveEpisode, decision: Decision) -> None:
        """Add the action and the env's answer to the prompt (and the token sequence)."""
        conversation: _Conversation = episode.context
        new_messages = conversation.prompt.record(decision.turn.completion_text, episode.observation, episode.info,
                                                  assistant=conversation.reply)
        if conversation.tokens is not None:
            conversation.pending_ids = conversation.tokens.add_messages(new_messages, decision.turn.completion_ids)
            conversation.pending_text = self.backend.decode(conversation.pending_ids, skip_special_tokens=False)  # type: ignore[attr-defined]

    def finish(self, episode: LiveEpisode) -> None:
        """Copy the episode's token sequence (token mode) onto its trajectory."""
        conversation: _Conversation | None = episode.context
        if conversation is None or conversation.tokens is None:
            return
        trajectory, tokens = episode.trajectory, conversation.tokens
        trajectory.token_ids = tokens.token_ids
        trajectory.token_mask = tokens.token_mask
        trajectory.token_logprobs = tokens.token_logprobs
        trajectory.prompt_length = tokens.prompt_length
        trajectory.turn_spans = list(tokens.turn_spans)

    def _call(self, episodes: Sequence[LiveEpisode], params: SamplingParams) -> list[Sample]:
        conversations: list[_Conversation] = [e.context for e in episodes]
        if self._token_backend:  # render and tokenise once here; the turn record reuses the text
            ids = [self._prompt_ids(c) for c in conversations]
            rows = self.backend.generate_from_ids(ids, params)  # type: ignore[attr-defined]
        else:
            rows = self.backend.generate([c.prompt.prompt() for c in conversations], params,
                                         tools=[c.prompt.tools for c in conversations])
        if len(rows) != len(episodes):
            raise RuntimeError(f"backend returned {len(rows)} results for {len(episodes)} prompts")
        return [_checked(row) for row in rows]

    def _prompt_ids(self, conversation: _Conversation) -> list[int]:
        if conversation.tokens is not None:
            ids = conversation.tokens.token_ids
        else:
            conversation.rendered = render_prompt(self.backend, conversation.prompt.prompt(), conversation.prompt.tools)
            ids = self.backend.encode(conversation.rendered)  # type: ignore[attr-defined]
        if self.max_prompt_tokens and len(ids) > self.max_prompt_tokens and conversation.prompt.truncation == "error":
            raise ValueError(f"the prompt is {len(ids)} tokens long and the env forbids cutting it to max_prompt_tokens="
                             f"{self.max_prompt_tokens} (its start would go); raise max_prompt_tokens or shorten the "
                             "prompt (e.g. a smaller max_chars of what the env adds to it, or a shorter history)")
        return list(ids[-self.max_prompt_tokens :]) if self.max_prompt_tokens else list(ids)


def _checked(row: Any) -> Sample:
    """The first sample of a backend's result row, or an error sample saying what was malformed.

    A result that is not a :class:`Sample`, has non-string text, or (from a token backend) has no
    completion tokens, ids that are not token ids, or a log-prob count that does not match them
    is not stepped into the env or trained on: its episode fails with the reason.
    """
    sample = row[0] if isinstance(row, (list, tuple)) and row else row
    problem = _malformed(sample)
    if problem is None:
        return sample
    return Sample(text="", finish_reason="error", has_token_ids=False, error=f"malformed backend output: {problem}")


def _malformed(sample: Any) -> str | None:
    if not isinstance(sample, Sample):
        return f"got {type(sample).__name__} instead of a Sample"
    if not sample.ok:
        return None
    if not isinstance(sample.text, str):
        return f"the text is a {type(sample.text).__name__}, not a string"
    if not sample.has_token_ids:
        return None
    ids = sample.completion_ids
    if not ids:
        return "no completion tokens"
    try:
        if any(isinstance(i, bool) or operator.index(i) < 0 for i in ids):
            return "completion ids that are not token ids"
    except TypeError:
        return "completion ids that are not token ids"
    if sample.logprobs and len(sample.logprobs) != len(ids):
        return f"{len(sample.logprobs)} log-probs for {len(ids)} completion tokens"
    return None


# ---------------------------------------------------------------------------------- agents
def extract_thinking(action: Any) -> str | None:
    """The content of the ``<think>…</think>`` blocks of an action, or None when there are none."""
    if not isinstance(action, str):
        return None
    parts = [m.strip() for m in _THINK.findall(action)]
    return "\n\n".join(parts) if parts else None


REPORTED = ("prompt", "thinking", "completion_tokens", "finish_reason", "request", "usage", "tool_calls",
            "context_trimmed")
"""What an agent may report about one action (``last_turn`` / ``last_turns``), kept in its turn record."""


def turn_report(report: Any) -> dict[str, Any]:
    """The fields of :data:`REPORTED` an agent reported for one action (a dict or an object;
    missing values and values of the wrong kind are left out)."""
    if report is None:
        return {}
    get = report.get if isinstance(report, dict) else (lambda name: getattr(report, name, None))
    values = {name: get(name) for name in REPORTED}
    tokens = values["completion_tokens"]
    values["completion_tokens"] = int(tokens) if isinstance(tokens, (int, float)) else None
    for name, kind in (("finish_reason", str), ("request", dict), ("usage", dict), ("tool_calls", list),
                       ("context_trimmed", list)):
        if not isinstance(values[name], kind):
            values[name] = None
    return {k: v for k, v in values.items() if v is not None}


class AgentPolicy:
    """An agent as the engine's policy (see the module docstring for the two kinds of agent).

    A one-at-a-time agent plays one episode per run, or, given ``copies`` (independent agents of
    the same kind, e.g. ``copy.deepcopy`` of it), as many episodes as it has agents: each episode
    gets one agent, reset with the episode's own seed, so an episode plays as it would alone, and
    the agents' ``act`` calls of a turn run at once in threads (an agent waiting on a model server
    does not hold up the others). A batched agent plays all of a run's episodes; when some end,
    ``keep_slots`` drops them before the next ``act_batch`` call. A call that raises
    :class:`~agentgym_suite.core.errors.BatchActionError` fails only the episodes it names; any
    other failing call fails every episode it served. Each episode's ``context`` is its
    :class:`~agentgym_suite.rollout.request_log.RequestLog`.
    """

    mode = AGENT_MODE

    def __init__(self, agent: Any, *, copies: Sequence[Any] = ()) -> None:
        if not is_agent(agent):
            raise TypeError(f"{type(agent).__name__} is not an agent: it needs reset(env, seed=) and "
                            "act(observation, info), or reset_batch/act_batch/keep_slots.")
        self.agent = agent
        self.batched = supports_batches(agent)
        if copies and self.batched:
            raise ValueError(f"{type(agent).__name__} plays many episodes with one call (act_batch); it needs no copies.")
        self.agents = [agent, *copies]
        """The one-at-a-time agents, one per episode a run may hold (just ``agent`` for a batched agent)."""
        self.max_episodes: int | None = None if self.batched else len(self.agents)
        self._slots: list[LiveEpisode] = []
        self._playing: dict[int, Any] = {}
        """id of a running episode -> the one-at-a-time agent playing it."""

    @property
    def name(self) -> str:
        """The agent's name."""
        return str(getattr(self.agent, "name", type(self.agent).__name__))

    def start(self, episodes: Sequence[LiveEpisode]) -> list[Failure | None]:
        """Reset the agent for the episodes (one ``reset_batch`` call, or one ``reset`` per agent)."""
        if not episodes:
            return []
        for episode in episodes:
            episode.context = RequestLog()
        if not self.batched:
            self._playing = {id(e): agent for e, agent in zip(episodes, self.agents)}
            return [self._reset_one(self._playing[id(e)], e) for e in episodes]
        first = episodes[0]
        try:
            if takes_seeds(self.agent):
                self.agent.reset_batch([e.env for e in episodes], seeds=[e.spec.seed for e in episodes])
            else:
                self.agent.reset_batch([e.env for e in episodes], seed=first.spec.seed)
        except Exception as exc:  # a failing agent fails its episodes, not the run
            return [Failure("agent", describe_error(exc))] * len(episodes)
        self._slots = list(episodes)
        return [None] * len(episodes)

    @staticmethod
    def _reset_one(agent: Any, episode: LiveEpisode) -> Failure | None:
        try:
            agent.reset(episode.env, seed=episode.spec.seed)
        except Exception as exc:  # a failing agent fails its episode, not the run
            return Failure("agent", describe_error(exc))
        return None

    def act(self, episodes: Sequence[LiveEpisode], turn: int) -> list[Decision | Failure]:
        """One ``act_batch`` call for the running episodes, or one ``act`` per episode (at once)."""
        if not self.batched:
            if len(episodes) == 1:
                return [self._act_one(episodes[0], turn)]
            with ThreadPoolExecutor(max_workers=len(episodes), thread_name_prefix="agent-act") as pool:
                return list(pool.map(lambda e: self._act_one(e, turn), episodes))
        errors: list[BaseException | None] = [None] * len(episodes)
        try:
            self._keep(episodes)
            try:
                actions = list(self.agent.act_batch([e.observation for e in episodes], [e.info for e in episodes]))
            except BatchActionError as partial:  # only the envs without an action fail
                actions, errors = list(partial.actions), list(partial.errors)
                if len(errors) != len(episodes):
                    raise
            reports = list(getattr(self.agent, "last_turns", None) or [])
            if len(actions) != len(episodes):
                raise RuntimeError(f"{self.name} returned {len(actions)} actions for {len(episodes)} envs")
        except Exception as exc:
            return [Failure("agent", describe_error(exc))] * len(episodes)
        return [Failure("agent", describe_error(errors[i])) if errors[i] is not None
                else self._decision(episode, turn, actions[i], reports[i] if i < len(reports) else None)
                for i, episode in enumerate(episodes)]

    def _act_one(self, episode: LiveEpisode, turn: int) -> Decision | Failure:
        agent = self._playing.get(id(episode), self.agent)
        try:
            action = agent.act(episode.observation, episode.info)
            report = getattr(agent, "last_turn", None)
        except Exception as exc:
            return Failure("agent", describe_error(exc))
        return self._decision(episode, turn, action, report)

    def observe(self, episode: LiveEpisode, decision: Decision) -> None:
        """Nothing to do: the agent reads the next observation in its next call."""

    def finish(self, episode: LiveEpisode) -> None:
        """Let go of the episode's agent (an agent reports no token sequence)."""
        self._playing.pop(id(episode), None)

    def _keep(self, episodes: Sequence[LiveEpisode]) -> None:
        """Drop the agent's slots of episodes that ended, keeping the others' histories."""
        if len(episodes) == len(self._slots) and all(a is b for a, b in zip(episodes, self._slots)):
            return
        position = {id(e): i for i, e in enumerate(self._slots)}
        self.agent.keep_slots([position[id(e)] for e in episodes])
        self._slots = list(episodes)

    @staticmethod
    def _decision(episode: LiveEpisode, turn: int, action: Any, report: Any) -> Decision:
        said = turn_report(report)
        prompt = said.get("prompt")
        messages = prompt if isinstance(prompt, list) else None
        requests = episode.context if isinstance(episode.context, RequestLog) else RequestLog()
        record = Turn(
            index=turn, prompt_text="" if prompt is None or messages is not None else str(prompt),
            completion_text=action if isinstance(action, str) else repr(action),
            prompt=messages,
            thinking=said.get("thinking") or extract_thinking(action),
            completion_tokens=said.get("completion_tokens"),
            finish_reason=said.get("finish_reason", "stop"),
            request=requests.compact(said.get("request")),
            usage=said.get("usage"),
            tool_calls=said.get("tool_calls"),
            context_trimmed=said.get("context_trimmed"),
        )
        return Decision(action, record)


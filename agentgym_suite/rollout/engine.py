"""The batched multi-turn rollout engine: N envs, one backend, one generation call per turn.

Each turn the prompts of all still-running envs go to the backend together; envs whose
episode ended drop out. Groups of ``group_size`` envs share a task id and a seed. An env that
raises, or a generation that fails or comes back malformed (see :func:`_checked`), ends *that*
trajectory with ``error`` set; the others go on.

Usage::

    engine = RolloutEngine(load_backend("tiny"), mode="chat", max_turns=10)
    trajectories = engine.run_groups("TextWorld-v0", task_ids=["t1", "t2"], group_size=4, seed=0)
"""

from __future__ import annotations

import operator
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.core.guards import check_timeout, guard_env, needs_replacement
from agentgym_suite.core.simulator_generation import SimulatorGeneration
from agentgym_suite.llm.base import Backend, Sample, SamplingParams
from agentgym_suite.rollout.chat_tokens import TokenConversation
from agentgym_suite.rollout.prompting import PROMPT_MODES, EpisodePrompt
from agentgym_suite.rollout.records import (
    ENV_REPORTED, INFO_SUBSET, Trajectory, TrajectoryWriter, Turn, info_subset,
)


RETRY_SEED_STRIDE = 1_000_003
"""When a batched call fails and its prompts are retried one by one, prompt ``i`` samples with
``seed + RETRY_SEED_STRIDE * (i + 1)`` (a seeded call per prompt would otherwise give every copy
of a prompt the same sample)."""


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode an env plays: task id (None = the env's seeded pick), reset seed, group."""

    task_id: str | None
    seed: int | None
    group_id: str
    traj_id: str = ""


@dataclass
class RolloutStats:
    """Where the time of the last :meth:`RolloutEngine.run` went."""

    wall_s: float = 0.0
    generate_s: float = 0.0
    generate_calls: int = 0
    completion_tokens: int = 0
    turns: int = 0

    @property
    def outside_generation(self) -> float:
        """Share of wall time spent outside backend calls."""
        return 0.0 if self.wall_s <= 0 else max(0.0, 1.0 - self.generate_s / self.wall_s)


@dataclass
class _Live:
    env: gym.Env
    spec: EpisodeSpec
    trajectory: Trajectory
    prompt: EpisodePrompt
    tokens: TokenConversation | None = None
    pending_ids: list[int] = field(default_factory=list)
    pending_text: str = ""
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    """``info`` of the state the next prompt shows."""
    state: str = ""
    """Raw observation of that state."""
    rendered: str | None = None
    """This turn's prompt text as rendered for generation (rendered once, reused for the record)."""


class RolloutEngine:
    """Drive many envs with one backend.

    Args:
        backend: any :class:`~agentgym_suite.llm.base.Backend`.
        mode: ``single`` (verl-agent per-turn prompt with a history window) or ``chat``
            (full history; with a token backend the episode's token ids are built
            incrementally with a model-token mask).
        sampling: sampling settings (``n`` must be 1: groups are separate envs). The seed,
            if set, is offset by the turn index each turn.
        max_turns: turn budget per episode (the env's own time limit also applies).
        history_length: history window of the ``single`` prompt.
        system_prompt: system message for ``chat`` mode on command envs.
        observation_role: role of env replies in ``chat`` mode on command envs.
        info_keys: ``info`` keys kept in each turn record.
        step_timeout: seconds one ``env.step`` may take in envs made by :meth:`run_groups`; a
            slower step ends that trajectory truncated with ``error`` set, and the env is
            replaced before the next run (None: no limit).
        record_oracle: record ``env.unwrapped.oracle()`` at every prompt state in
            ``Turn.oracle`` (a trainer's privileged teacher text; costs one oracle call per turn).
        max_prompt_tokens: with a token backend, prompts longer than this lose their oldest
            tokens before generation (None: no limit).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        mode: str = "single",
        sampling: SamplingParams | None = None,
        max_turns: int = 50,
        history_length: int = 2,
        system_prompt: str | None = None,
        observation_role: str = "user",
        info_keys: Sequence[str] = INFO_SUBSET,
        step_timeout: float | None = None,
        record_oracle: bool = False,
        max_prompt_tokens: int | None = None,
    ) -> None:
        if mode not in PROMPT_MODES:
            raise ValueError(f"mode={mode!r}; choose one of {PROMPT_MODES}.")
        sampling = sampling or SamplingParams()
        if sampling.n != 1:
            raise ValueError("RolloutEngine needs sampling.n == 1; use group_size for several rollouts per task.")
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}.")
        self.backend = backend
        self.mode = mode
        self.sampling = sampling
        self.max_turns = max_turns
        self.history_length = history_length
        self.system_prompt = system_prompt
        self.observation_role = observation_role
        self.info_keys = tuple(info_keys)
        self.step_timeout = check_timeout(step_timeout)
        if max_prompt_tokens is not None and max_prompt_tokens < 1:
            raise ValueError(f"max_prompt_tokens must be >= 1 or None, got {max_prompt_tokens}.")
        self.record_oracle = record_oracle
        self.max_prompt_tokens = max_prompt_tokens
        self._failed_envs: set[int] = set()
        self.stats = RolloutStats()
        self._envs: dict[tuple[str, int], list[gym.Env]] = {}

    @property
    def token_mode(self) -> bool:
        """True when ``chat`` trajectories carry incremental token ids."""
        return self.mode == "chat" and self._token_backend

    @property
    def _token_backend(self) -> bool:
        return bool(getattr(self.backend, "supports_token_prompts", False))

    # ------------------------------------------------------------------ public entry points
    def run_groups(
        self,
        env_id: str,
        task_ids: Sequence[str | None],
        *,
        group_size: int = 1,
        seed: int | None = 0,
        env_kwargs: dict[str, Any] | None = None,
        writer: TrajectoryWriter | None = None,
    ) -> list[Trajectory]:
        """Play ``group_size`` episodes of each task (same task id and reset seed within a group).

        Envs are made with ``gymnasium.make(env_id, **env_kwargs)`` and reused across calls.
        """
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}.")
        specs = [
            EpisodeSpec(task_id, None if seed is None else seed + g, f"{env_id}/{g}:{task_id}", f"{g}.{k}")
            for g, task_id in enumerate(task_ids)
            for k in range(group_size)
        ]
        envs = self._make_envs(env_id, len(specs), env_kwargs or {})
        return self.run(envs, specs, env_id=env_id, writer=writer)

    def run(
        self,
        envs: Sequence[gym.Env],
        specs: Sequence[EpisodeSpec],
        *,
        env_id: str = "",
        writer: TrajectoryWriter | None = None,
    ) -> list[Trajectory]:
        """Play one episode per (env, spec) pair and return the trajectories in the same order."""
        if len(envs) != len(specs):
            raise ValueError(f"run() got {len(envs)} envs for {len(specs)} episode specs; pass one env per spec.")
        self.stats = RolloutStats()
        started = time.perf_counter()
        live = [self._start(env, spec, env_id or _env_id(env)) for env, spec in zip(envs, specs)]
        for turn in range(self.max_turns):
            active = [item for item in live if not item.done]
            if not active:
                break
            samples = self._generate(active, turn)
            for item, sample in zip(active, samples):
                self._step(item, sample, turn)
        for item in live:
            if not item.done:
                item.trajectory.truncated = True
                if item.trajectory.turns:
                    item.trajectory.turns[-1].truncated = True
                item.done = True
                self._finish_tokens(item)
        self.stats.wall_s = time.perf_counter() - started
        trajectories = [item.trajectory for item in live]
        if writer is not None:
            for trajectory in trajectories:
                writer.write(trajectory)
        return trajectories

    def close(self) -> None:
        """Close the envs made by :meth:`run_groups`."""
        for envs in self._envs.values():
            for env in envs:
                env.close()
        self._envs.clear()

    # ------------------------------------------------------------------ internals
    def _make_envs(self, env_id: str, n: int, kwargs: dict[str, Any]) -> list[gym.Env]:
        import agentgym_suite  # noqa: F401  (registers the ids)

        key = (env_id, hash(repr(sorted(kwargs.items()))))
        pool = self._envs.setdefault(key, [])
        for index, env in enumerate(pool):  # an env that crashed or hung is not trusted again
            if id(env) in self._failed_envs or needs_replacement(env):
                self._failed_envs.discard(id(env))
                _close_quietly(env)
                pool[index] = guard_env(gym.make(env_id, **kwargs), self.step_timeout)
        while len(pool) < n:
            pool.append(guard_env(gym.make(env_id, **kwargs), self.step_timeout))
        return pool[:n]

    def _start(self, env: gym.Env, spec: EpisodeSpec, env_id: str) -> _Live:
        trajectory = Trajectory(task_id=str(spec.task_id or ""), group_id=spec.group_id, env_id=env_id,
                                seed=spec.seed, traj_id=spec.traj_id, mode=self.mode)
        prompt = EpisodePrompt(self.mode, env=env, history_length=self.history_length,
                               system_prompt=self.system_prompt, observation_role=self.observation_role)
        item = _Live(env, spec, trajectory, prompt)
        try:
            options = {"task_id": spec.task_id} if spec.task_id is not None else None
            observation, info = env.reset(seed=spec.seed, options=options)
            trajectory.task_id = str(info.get("task_id") or trajectory.task_id)
            trajectory.initial_observation = observation
            trajectory.task = str(info.get("task") or "")
            trajectory.reset_info = info_subset(info, self.info_keys)
            item.info, item.state = info, str(info.get("raw_observation", observation))
            prompt.start(observation, info)
            if self.token_mode and not prompt.env_rendered:
                item.tokens = TokenConversation(self.backend, prompt.prompt(), prompt.tools)  # type: ignore[arg-type]
                item.pending_ids = list(item.tokens.token_ids)
                item.pending_text = self.backend.decode(item.pending_ids, skip_special_tokens=False)  # type: ignore[attr-defined]
        except Exception as exc:  # a broken env is data, not a crash of the batch
            self._fail(item, "reset", exc)
        return item

    def _generate(self, active: list[_Live], turn: int) -> list[Sample]:
        params = self.sampling if self.sampling.seed is None else replace(self.sampling, seed=self.sampling.seed + turn)
        began = time.perf_counter()
        try:
            samples = self._call(active, params)
        except Exception:  # find the prompt that broke the batch; the others still run
            samples = []
            for index, item in enumerate(active):
                try:  # a seed of its own: group members share a prompt and must not share a sample
                    own = params if params.seed is None else replace(
                        params, seed=params.seed + RETRY_SEED_STRIDE * (index + 1))
                    samples.extend(self._call([item], own))
                except Exception as exc:
                    samples.append(Sample(text="", finish_reason="error", has_token_ids=False, error=_describe(exc)))
        self.stats.generate_s += time.perf_counter() - began
        self.stats.generate_calls += 1
        return samples

    def _call(self, items: list[_Live], params: SamplingParams) -> list[Sample]:
        if self._token_backend:  # render and tokenise once here; the turn record reuses the text
            ids = [self._prompt_ids(item) for item in items]
            rows = self.backend.generate_from_ids(ids, params)  # type: ignore[attr-defined]
        else:
            rows = self.backend.generate([item.prompt.prompt() for item in items], params,
                                         tools=[item.prompt.tools for item in items])
        if len(rows) != len(items):
            raise RuntimeError(f"backend returned {len(rows)} results for {len(items)} prompts")
        return [_checked(row) for row in rows]

    def _prompt_ids(self, item: _Live) -> list[int]:
        if item.tokens is not None:
            ids = item.tokens.token_ids
        else:
            item.rendered = _render(self.backend, item.prompt.prompt(), item.prompt.tools)
            ids = self.backend.encode(item.rendered)  # type: ignore[attr-defined]
        return list(ids[-self.max_prompt_tokens :]) if self.max_prompt_tokens else list(ids)

    def _oracle(self, env: gym.Env) -> list[str] | None:
        try:
            return [str(a) for a in env.unwrapped.oracle()]  # type: ignore[attr-defined]
        except Exception:  # an env without an oracle gives no privileged text
            return None

    def _step(self, item: _Live, sample: Sample, turn: int) -> None:
        trajectory = item.trajectory
        if not sample.ok:
            self._fail(item, "generate", sample.error)
            return
        self.stats.completion_tokens += len(sample.completion_ids)
        self.stats.turns += 1
        if item.tokens is not None:
            prompt_ids, prompt_text = item.pending_ids, item.pending_text
            item.tokens.add_completion(sample)
        else:
            prompt_ids = list(sample.prompt_ids)
            prompt_text = item.rendered
            if prompt_text is None:
                prompt_text = _render(self.backend, item.prompt.prompt(), item.prompt.tools)
            item.rendered = None
        record = Turn(index=turn, prompt_text=prompt_text, completion_text=sample.text, prompt_ids=prompt_ids,
                      completion_ids=list(sample.completion_ids), logprobs=list(sample.logprobs),
                      finish_reason=sample.finish_reason, role=str(item.info.get("role", "agent")),
                      position=int(item.info.get("position", 0) or 0), state=item.state,
                      oracle=self._oracle(item.env) if self.record_oracle else None)
        trajectory.turns.append(record)
        try:
            observation, reward, terminated, truncated, info = item.env.step(sample.text)
        except Exception as exc:
            self._fail(item, "step", exc)
            return
        record.reward = float(reward)
        record.action_valid = bool(info.get("action_valid", True))
        record.observation = observation
        record.info = info_subset(info, self.info_keys)
        record.terminated, record.truncated = bool(terminated), bool(truncated)
        record.simulator_generations = [SimulatorGeneration.from_dict(g) for g in info.get("simulator_generations") or []]
        if isinstance(info.get("position_rewards"), dict):
            trajectory.position_rewards = {int(k): float(v) for k, v in info["position_rewards"].items()}
        item.info, item.state = info, str(info.get("raw_observation", observation))
        if info.get("error") and trajectory.error is None:
            trajectory.error = f"{ENV_REPORTED}{info['error']}"
        trajectory.episode_return += float(reward)
        trajectory.won = bool(info.get("won", False))
        trajectory.score = float(info.get("score", 0.0) or 0.0)
        if terminated or truncated:
            trajectory.terminated, trajectory.truncated = bool(terminated), bool(truncated)
            item.done = True
            self._finish_tokens(item)
            return
        new_messages = item.prompt.record(sample.text, observation, info)
        if item.tokens is not None:
            try:
                item.pending_ids = item.tokens.add_messages(new_messages, sample.completion_ids)
                item.pending_text = self.backend.decode(item.pending_ids, skip_special_tokens=False)  # type: ignore[attr-defined]
            except Exception as exc:
                self._fail(item, "tokenise", exc)

    def _finish_tokens(self, item: _Live) -> None:
        if item.tokens is None:
            return
        trajectory = item.trajectory
        trajectory.token_ids = item.tokens.token_ids
        trajectory.token_mask = item.tokens.token_mask
        trajectory.token_logprobs = item.tokens.token_logprobs
        trajectory.prompt_length = item.tokens.prompt_length
        trajectory.turn_spans = list(item.tokens.turn_spans)

    def _fail(self, item: _Live, stage: str, error: Exception | str | None) -> None:
        message = error if isinstance(error, str) else _describe(error) if error is not None else "unknown error"
        item.trajectory.error = f"{stage} failed: {message}"
        if stage in ("reset", "step"):
            self._failed_envs.add(id(item.env))
        item.done = True
        self._finish_tokens(item)


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


def _close_quietly(env: gym.Env) -> None:
    try:
        env.close()
    except Exception:  # closing a crashed backend may fail again; nothing left to save
        pass


def _describe(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    location = f" (at {where[0].filename.rsplit('/', 1)[-1]}:{where[0].lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{location}"


def _env_id(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _render(backend: Backend, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    render: Callable[..., str] | None = getattr(backend, "render_prompt", None)
    if render is None:
        return messages[-1]["content"]
    return render(messages, tools)

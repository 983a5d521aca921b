"""The batched multi-turn rollout engine: N envs, one policy, one generate-or-act call per turn.

The policy is a generation backend (the trainer's path: exact token ids and log-probs) or an
agent (evaluation's path: the agent keeps its own prompts) — see :mod:`~agentgym_suite.rollout.policies`.
Each turn the engine asks the policy once for the actions of every running episode, then steps
their envs; episodes that ended drop out. Groups of ``group_size`` envs share a task id and a
seed. An env that raises, a policy that fails, a generation that comes back malformed: each ends
*that* trajectory with ``error`` and ``error_stage`` set; the others go on.

A run has three phases, each in one place: :meth:`RolloutEngine._reset_all` resets every env,
:meth:`RolloutEngine._decide` makes the turn's one policy call, and :meth:`RolloutEngine._step_all`
steps every env that got an action (``_reset_envs``/``_step_envs`` are the only calls into envs).
Those two send a turn's calls to the envs' executor in one batch (:mod:`~agentgym_suite.rollout.workers`):
inline envs are stepped one after another, envs in worker processes or Ray actors in parallel,
with the same results; a worker that dies ends only the episodes it held (stage ``reset``/``step``).

Usage::

    engine = RolloutEngine(load_backend("tiny"), mode="chat", max_turns=10)
    trajectories = engine.run_groups("TextWorld-v0", task_ids=["t1", "t2"], group_size=4, seed=0)

    engine = RolloutEngine(OracleAgent(), max_turns=50, info_keys=None)
    [trajectory] = engine.run([env], [EpisodeSpec("task-1", seed=0, group_id="task-1")])
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import gymnasium as gym

from agentgym_suite.core.role_generation import ROLE_GENERATIONS, RoleGeneration
from agentgym_suite.rollout.env_pool import EnvPool
from agentgym_suite.rollout.episodes import MAX_ERROR_CHARS, Decision, EpisodeSpec, Failure, LiveEpisode, describe_error
from agentgym_suite.rollout.policies import make_policy
from agentgym_suite.rollout.prompting import PROMPT_MODES
from agentgym_suite.rollout.records import INFO_SUBSET, Trajectory, TrajectoryWriter, info_subset
from agentgym_suite.rollout.seeding import episode_seed
from agentgym_suite.rollout.workers import reset_envs, step_envs

__all__ = ["EpisodeSpec", "RolloutEngine", "RolloutStats"]

_BACKEND_DEFAULTS: dict[str, Any] = {"mode": "single", "sampling": None, "history_length": 2, "system_prompt": None,
                                     "observation_role": "user", "max_prompt_tokens": None}


@dataclass
class RolloutStats:
    """Where the time of the last :meth:`RolloutEngine.run` went."""

    wall_s: float = 0.0
    generate_s: float = 0.0
    """Seconds inside the policy's calls (generation, or the agent's ``act``)."""
    generate_calls: int = 0
    completion_tokens: int = 0
    turns: int = 0

    @property
    def outside_generation(self) -> float:
        """Share of wall time spent outside policy calls."""
        return 0.0 if self.wall_s <= 0 else max(0.0, 1.0 - self.generate_s / self.wall_s)


class RolloutEngine:
    """Drive many envs with one policy.

    Args:
        policy: a generation backend (:class:`~agentgym_suite.llm.base.Backend`), an agent
            (``reset``/``act``, or ``reset_batch``/``act_batch``/``keep_slots``), or a policy
            from :mod:`~agentgym_suite.rollout.policies`.
        mode, sampling, history_length, system_prompt, observation_role, max_prompt_tokens:
            how a generation backend is prompted and sampled (see
            :class:`~agentgym_suite.rollout.policies.BackendPolicy`); an agent makes its own prompts.
        max_turns: turn budget per episode (the env's own time limit also applies).
        info_keys: ``info`` keys kept in each turn record; None keeps every scalar entry (what an
            evaluation records; see :func:`~agentgym_suite.rollout.records.info_subset`).
        step_timeout: seconds one ``env.step`` may take in envs made by :meth:`run_groups`; a
            slower step ends that trajectory truncated with ``error`` set, and the env is
            replaced before the next run (None: no limit).
        record_oracle: record ``env.unwrapped.oracle()`` at every prompt state in
            ``Turn.oracle`` (a trainer's privileged teacher text; costs one oracle call per turn).
        env_pool: where :meth:`run_groups`/:meth:`run_specs` get their envs (default: a pool of
            the engine's own with ``step_timeout`` and ``env_workers``).
        env_workers: where the engine's own pool runs its envs: ``1`` inline, ``N`` worker
            processes, ``ray`` (see :func:`~agentgym_suite.rollout.workers.parse_env_workers`);
            None: the env's default.
        lockstep: for runs split over several processes that must make the same generation calls
            (a trainer under ZeRO-3/FSDP or vLLM's server mode): called once per turn with whether
            this process still has running episodes, it returns whether any process has. While any
            has, every process keeps taking turns, and one with none left calls the policy with no
            episodes (an empty generation call). None: a run ends when its own episodes have.
    """

    def __init__(
        self,
        policy: Any,
        *,
        mode: str = "single",
        sampling: Any = None,
        max_turns: int = 50,
        history_length: int = 2,
        system_prompt: str | None = None,
        observation_role: str = "user",
        info_keys: Sequence[str] | None = INFO_SUBSET,
        step_timeout: float | None = None,
        record_oracle: bool = False,
        max_prompt_tokens: int | None = None,
        env_pool: EnvPool | None = None,
        lockstep: Callable[[bool], bool] | None = None,
        env_workers: Any = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}.")
        if mode not in PROMPT_MODES:
            raise ValueError(f"mode={mode!r}; choose one of {PROMPT_MODES}.")
        if env_pool is not None and (step_timeout is not None or env_workers is not None):
            raise ValueError("pass step_timeout and env_workers to the EnvPool given as env_pool, not to the engine.")
        self.env_pool = env_pool if env_pool is not None else EnvPool(step_timeout, workers=env_workers)
        given = {"mode": mode, "sampling": sampling, "history_length": history_length, "system_prompt": system_prompt,
                 "observation_role": observation_role, "max_prompt_tokens": max_prompt_tokens}
        backend_settings = given if callable(getattr(policy, "generate", None)) else {
            k: v for k, v in given.items() if v != _BACKEND_DEFAULTS[k]}
        self.policy = make_policy(policy, **backend_settings)
        self.max_turns = max_turns
        self.info_keys = None if info_keys is None else tuple(info_keys)
        self.record_oracle = record_oracle
        self.lockstep = lockstep
        self.stats = RolloutStats()

    @property
    def mode(self) -> str:
        """The policy's prompt mode (``single``/``chat`` for a backend, ``agent`` for an agent)."""
        return self.policy.mode

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
        """Play ``group_size`` episodes of each task (same task id and reset seed within a group; the
        g-th group's seed is :func:`~agentgym_suite.rollout.seeding.episode_seed` of ``seed``, its task and g).

        Envs come from :attr:`env_pool` (made with ``gymnasium.make(env_id, **env_kwargs)``, reused
        across calls).
        """
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}.")
        specs = [
            EpisodeSpec(task_id, None if seed is None else episode_seed(seed, task_id, g), f"{env_id}/{g}:{task_id}", f"{g}.{k}",
                        attempt=k)
            for g, task_id in enumerate(task_ids)
            for k in range(group_size)
        ]
        return self.run_specs(env_id, specs, env_kwargs=env_kwargs, writer=writer)

    def run_specs(
        self,
        env_id: str,
        specs: Sequence[EpisodeSpec],
        *,
        env_kwargs: dict[str, Any] | None = None,
        writer: TrajectoryWriter | None = None,
    ) -> list[Trajectory]:
        """Play one episode per spec on envs of ``env_id`` from :attr:`env_pool`; an env whose
        episode failed on the env side is replaced before the next run."""
        envs = self.env_pool.get(env_id, len(specs), env_kwargs)
        trajectories = self.run(envs, specs, env_id=env_id, writer=writer)
        self.env_pool.distrust(envs, trajectories)
        return trajectories

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
        limit = self.policy.max_episodes
        if limit is not None and len(specs) > limit:
            raise ValueError(
                f"{type(getattr(self.policy, 'agent', self.policy)).__name__} plays {limit} episode(s) at a time but "
                f"run() got {len(specs)}; run them one by one, or give the agent reset_batch/act_batch/keep_slots."
            )
        self.stats = RolloutStats()
        started = time.perf_counter()
        live = [self._episode(env, spec, env_id or _env_id(env)) for env, spec in zip(envs, specs)]
        self._reset_all(live)
        for turn in range(self.max_turns):
            active = [episode for episode in live if not episode.done]
            if not (active if self.lockstep is None else self.lockstep(bool(active))):
                break
            self._step_all(active, self._decide(active, turn), turn)
        for episode in live:
            if not episode.done:
                episode.trajectory.truncated = True
                if episode.trajectory.turns:
                    episode.trajectory.turns[-1].truncated = True
                self._end(episode)
        self.stats.wall_s = time.perf_counter() - started
        trajectories = [episode.trajectory for episode in live]
        for trajectory in trajectories:  # each episode's share, so summed wall times stay true
            trajectory.wall_s = self.stats.wall_s / len(trajectories)
        if writer is not None:
            for trajectory in trajectories:
                writer.write(trajectory)
        return trajectories

    def close(self) -> None:
        """Close the envs (and env workers) of :attr:`env_pool`."""
        self.env_pool.close()

    # ------------------------------------------------------------------ the three phases
    def _reset_all(self, live: list[LiveEpisode]) -> None:
        """Reset every env, then start the policy on the episodes whose reset worked."""
        calls = [(e.env, e.spec.seed, {"task_id": e.spec.task_id} if e.spec.task_id is not None else None) for e in live]
        for episode, result in zip(live, self._reset_envs(calls)):
            if isinstance(result, BaseException):
                self._fail(episode, Failure("reset", describe_error(result)))
                continue
            observation, info, episode.oracle = result
            trajectory = episode.trajectory
            trajectory.task_id = str(info.get("task_id") or trajectory.task_id)
            trajectory.initial_observation = str(observation)
            trajectory.task = str(info.get("task") or "")
            trajectory.task_type = str(info["task_type"]) if info.get("task_type") is not None else None
            trajectory.reset_info = info_subset(info, self.info_keys)
            self._show(episode, observation, info)
        started = [e for e in live if not e.done]
        for episode, failure in zip(started, self.policy.start(started)):
            if failure is not None:
                self._fail(episode, failure)

    def _decide(self, active: list[LiveEpisode], turn: int) -> list[Decision | Failure]:
        """The turn's one policy call; its time is shared out among the episodes it served."""
        began = time.perf_counter()
        decisions = self.policy.act(active, turn)
        spent = time.perf_counter() - began
        self.stats.generate_s += spent
        self.stats.generate_calls += 1
        for episode in active:
            episode.trajectory.policy_s += spent / len(active)
        return decisions

    def _step_all(self, active: list[LiveEpisode], decisions: list[Decision | Failure], turn: int) -> None:
        """Record each decided turn, step every env that got an action, then take in the results."""
        stepping: list[tuple[LiveEpisode, Decision]] = []
        for episode, decision in zip(active, decisions):
            if isinstance(decision, Failure):
                self._fail(episode, decision)
                continue
            record = decision.turn
            record.role = str(episode.info.get("role", "agent"))
            record.position = int(episode.info.get("position", 0) or 0)
            record.state = episode.state
            record.oracle = episode.oracle if self.record_oracle else None
            episode.trajectory.turns.append(record)
            self.stats.turns += 1
            self.stats.completion_tokens += record.completion_tokens or 0
            stepping.append((episode, decision))
        results = self._step_envs([(episode.env, decision.action) for episode, decision in stepping])
        for (episode, decision), result in zip(stepping, results):
            if isinstance(result, BaseException):
                self._fail(episode, Failure("step", describe_error(result)))
            else:
                self._take_step(episode, decision, *result)

    # ------------------------------------------------------------------ env calls
    def _reset_envs(self, calls: list[tuple[Any, int | None, dict[str, Any] | None]]) -> list[Any]:
        """``env.reset`` for each call, all sent at once: ``(observation, info, oracle)`` (the oracle
        when :attr:`record_oracle`), or the exception the call raised."""
        return reset_envs([(env, seed, options, self.record_oracle) for env, seed, options in calls])

    def _step_envs(self, calls: list[tuple[Any, Any]]) -> list[Any]:
        """``env.step`` for each call, all sent at once: the 5-tuple plus the oracle of the new state
        (when :attr:`record_oracle`), or the exception the call raised."""
        return step_envs([(env, action, self.record_oracle) for env, action in calls])

    # ------------------------------------------------------------------ bookkeeping
    def _episode(self, env: gym.Env, spec: EpisodeSpec, env_id: str) -> LiveEpisode:
        trajectory = Trajectory(task_id=str(spec.task_id or ""), group_id=spec.group_id, env_id=env_id, seed=spec.seed,
                                traj_id=spec.traj_id, mode=self.policy.mode, attempt=spec.attempt)
        return LiveEpisode(env, spec, trajectory)

    def _show(self, episode: LiveEpisode, observation: Any, info: dict[str, Any]) -> None:
        """Make ``observation``/``info`` the state the next action answers."""
        episode.observation, episode.info = observation, info
        episode.state = str(info.get("raw_observation", observation))

    def _take_step(self, episode: LiveEpisode, decision: Decision, observation: Any, reward: Any, terminated: Any,
                   truncated: Any, info: dict[str, Any], oracle: list[str] | None = None) -> None:
        trajectory, record = episode.trajectory, decision.turn
        episode.oracle = oracle
        record.reward = float(reward)
        record.action_valid = bool(info.get("action_valid", True))
        record.observation = observation
        record.info = info_subset(info, self.info_keys)
        record.terminated, record.truncated = bool(terminated), bool(truncated)
        record.role_generations = [RoleGeneration.from_dict(g) for g in info.get(ROLE_GENERATIONS) or []]
        if isinstance(info.get("position_rewards"), dict):
            trajectory.position_rewards = {int(k): float(v) for k, v in info["position_rewards"].items()}
        self._show(episode, observation, info)
        if info.get("error") and trajectory.error is None:
            trajectory.error, trajectory.error_stage = str(info["error"])[:MAX_ERROR_CHARS], "env"
        trajectory.episode_return += float(reward)
        trajectory.won = bool(info.get("won", False))
        trajectory.score = float(info.get("score", 0.0) or 0.0)
        if terminated or truncated:
            trajectory.terminated, trajectory.truncated = bool(terminated), bool(truncated)
            self._end(episode)
            return
        try:
            self.policy.observe(episode, decision)
        except Exception as exc:
            self._fail(episode, Failure("tokenise", describe_error(exc)))

    def _fail(self, episode: LiveEpisode, failure: Failure) -> None:
        episode.trajectory.error, episode.trajectory.error_stage = failure.message, failure.stage
        episode.trajectory.won = False
        self._end(episode)

    def _end(self, episode: LiveEpisode) -> None:
        episode.done = True
        self.policy.finish(episode)
        tokens = [t.completion_tokens for t in episode.trajectory.turns if t.completion_tokens is not None]
        episode.trajectory.completion_tokens = sum(tokens) if tokens else None


def _env_id(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__

"""``RehearsingAgent``: test-time private rehearsal (EnvACE).

Before its first action in a task, the agent plays the task ``budget`` times against a world
model - a :class:`~agentgym_suite.methods.envace.RehearsalEnv` over a *separate* copy of the
real env's tool env, so nothing imagined touches the real env - then acts for real once, with
a summary of the imagined attempts (the rehearsal memory) in its context.

Modes:

* ``parallel`` - the attempts are independent (each starts from the plain task);
* ``sequential`` - attempt *i* starts with the memory of attempts 1..i-1, so it can fix what
  went wrong before.

Choices left open by the method, made here:

* Imagined episodes score nothing (``reward_mode="none"``) and the simulator sees no recorded
  examples: both would leak gold data into a test-time decision. Errors do not end an
  imagined attempt (``end_on_tool_error=False``): the failure is what the memory should teach.
* The memory is built without another model call: per attempt, its calls with their imagined
  results (clipped), its final reply and how it ended; then a suggested plan - the calls of the
  best attempt, ranked by (no error results, ended with a reply, fewer errors, earlier).
* It is placed at the end of the system message of the real conversation (or before the
  first user message when there is none); ``info["rehearsal_memory"]`` also holds it.

Counting: :meth:`rehearsal_stats` reports real env steps, real tool calls, imagined attempts,
imagined steps and simulated calls. Only the committed execution touches the real env.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import gymnasium as gym

from agentgym_suite.methods.envace.env import RehearsalEnv
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.seeding import episode_seed

MODES = ("parallel", "sequential")
MAX_RESULT_CHARS = 200


@dataclass
class Attempt:
    """One imagined attempt at the task."""

    index: int
    calls: list[tuple[str, dict[str, Any], Any, bool]] = field(default_factory=list)
    reply: str = ""
    ended: str = "turn limit"
    steps: int = 0

    @property
    def errors(self) -> int:
        """Calls whose imagined result was an error."""
        return sum(not ok for *_, ok in self.calls)

    def rank(self) -> tuple[int, int, int, int]:
        """Sort key of the suggested plan: higher is better."""
        return (int(self.errors == 0), int(self.ended == "reply"), -self.errors, -self.index)


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + "..."


def render_memory(attempts: list[Attempt]) -> str:
    """The rehearsal memory text for a list of attempts (see the module docstring)."""
    if not attempts:
        return ""
    lines = [
        "# Private rehearsal",
        f"Before acting you rehearsed this task {len(attempts)} time(s) against your own model of the environment. "
        "The tool results below were imagined, not real: use them to plan, and trust the real results you get now.",
    ]
    for attempt in attempts:
        outcome = {"reply": "ended with a reply", "turn limit": "ran out of turns"}.get(attempt.ended, attempt.ended)
        lines.append(f"## Attempt {attempt.index + 1}: {outcome}, {len(attempt.calls)} call(s), {attempt.errors} error(s)")
        for name, arguments, result, ok in attempt.calls:
            mark = "" if ok else " [error]"
            lines.append(f"- call {name} {json.dumps(arguments, ensure_ascii=False)} -> {_clip(result)}{mark}")
        if attempt.reply:
            lines.append(f"- reply: {_clip(attempt.reply)}")
    best = max(attempts, key=Attempt.rank)
    plan = [f"{k}. {name} {json.dumps(args, ensure_ascii=False)}" for k, (name, args, _, ok) in enumerate(
        [c for c in best.calls if c[3]], 1)]
    lines.append(f"## Suggested plan (from attempt {best.index + 1})")
    lines.extend(plan or ["No tool call is needed; answer the user directly."])
    return "\n".join(lines)


class _WithMemory(gym.Wrapper):
    """An imagined env whose first ``info`` carries the rehearsal memory (see :func:`with_memory`)."""

    def __init__(self, env: gym.Env, memory: str) -> None:
        super().__init__(env)
        self.memory = memory

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return observation, with_memory(info, self.memory)


def with_memory(info: dict[str, Any], memory: str) -> dict[str, Any]:
    """A copy of ``info`` whose conversation carries ``memory`` (system message, else first user message)."""
    info = dict(info)
    info["rehearsal_memory"] = memory
    if not memory:
        return info
    messages = [dict(m) for m in info.get("messages") or []]
    if messages:
        target = next((m for m in messages if m.get("role") == "system"), None)
        if target is not None:
            target["content"] = f"{target.get('content') or ''}\n\n{memory}".strip()
        else:
            first = next((m for m in messages if m.get("role") == "user"), messages[0])
            first["content"] = f"{memory}\n\n{first.get('content') or ''}"
        info["messages"] = messages
    else:
        info["task"] = f"{memory}\n\n{info.get('task') or ''}"
    return info


class RehearsingAgent:
    """Wraps an agent with test-time private rehearsal.

    Args:
        agent: the agent that acts (imagined and real); any Agent of the suite.
        world_model: ``"same"`` (the agent's own ``backend``, as the method intends), a
            backend spec (``tiny``, ``default``, ``hf:...``) or a backend object.
        budget: imagined attempts per task (N; 2 in the paper). 0 disables rehearsal.
        mode: ``parallel`` or ``sequential``.
        max_turns: turn limit of each imagined attempt.
        base_env_factory: builds the tool env to rehearse on; default: a fresh
            ``gymnasium.make(env.spec.id, **env.spec.kwargs)`` of the real env.
        sampling: simulator sampling for the world model (dict or SamplingParams).
        max_prompt_chars: longest simulator prompt.

    Info keys it adds to the infos it passes to ``agent``:
        ``rehearsal_memory``: str: the summary of imagined attempts, also placed in the conversation.
    """

    info_keys: ClassVar[dict[str, str]] = {
        "rehearsal_memory": "str: the summary of imagined attempts, also placed in the conversation.",
    }
    """The info keys this agent adds to the env's (see :func:`agentgym_suite.core.info.documented_keys`)."""

    def __init__(
        self,
        agent: Any,
        world_model: Any = "same",
        *,
        budget: int = 2,
        mode: str = "parallel",
        max_turns: int = 10,
        base_env_factory: Callable[[gym.Env], gym.Env] | None = None,
        sampling: Any = None,
        max_prompt_chars: int = 24_000,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode={mode!r}; choose one of {MODES}.")
        if budget < 0 or max_turns < 1:
            raise ValueError(f"budget must be >= 0 and max_turns >= 1 (got budget={budget}, max_turns={max_turns}).")
        self.agent = agent
        self.budget = int(budget)
        self.mode = mode
        self.max_turns = int(max_turns)
        self.base_env_factory = base_env_factory
        self.sampling = sampling
        self.max_prompt_chars = max_prompt_chars
        self._world_model_spec = world_model
        self._world_backend: Any = None
        self._imagined: Any = None
        self._env: gym.Env | None = None
        self._seed: int | None = None
        self._started = False
        self.memory = ""
        self.attempts: list[Attempt] = []
        self.stats = {"episodes": 0, "real_steps": 0, "real_tool_calls": 0, "imagined_attempts": 0,
                      "imagined_steps": 0, "simulated_calls": 0}
        self._real_log: list[Any] | None = None
        self._counted_tool_log = 0
        self.name = f"rehearse-{mode}-{budget}({getattr(agent, 'name', type(agent).__name__)})"

    # ------------------------------------------------------------------ Agent protocol
    @property
    def last_turn(self) -> Any:
        """The wrapped agent's report on its last real action."""
        return getattr(self.agent, "last_turn", None)

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        """Start a task in the real ``env``; rehearsal runs before the first action."""
        self._count_real_tool_calls()
        self._real_log = None
        self._env = env
        self._seed = seed
        self._started = False
        self.memory = ""
        self.attempts = []
        self.stats["episodes"] += 1

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """Rehearse (first action only), then act in the real env with the memory in context."""
        if self._env is None:
            raise RuntimeError("RehearsingAgent.act() called before reset(env).")
        if not self._started:
            self._started = True
            if self.budget > 0:
                self._rehearse(str(info.get("task_id", "")))
            self.agent.reset(self._env, seed=self._seed)
            info = with_memory(info, self.memory)
            self._real_log = getattr(self._env.unwrapped, "tool_log", None)
            self._counted_tool_log = 0
        self.stats["real_steps"] += 1
        return self.agent.act(observation, info)

    def rehearsal_stats(self) -> dict[str, Any]:
        """Counts so far: real env steps and tool calls vs imagined attempts, steps and simulated calls."""
        self._count_real_tool_calls()
        return {"budget": self.budget, "mode": self.mode, **self.stats}

    # ------------------------------------------------------------------ rehearsal
    def _rehearse(self, task_id: str) -> None:
        env = self._imagined_env()
        for index in range(self.budget):
            memory = render_memory(self.attempts) if self.mode == "sequential" else ""
            attempt = self._attempt(env, task_id, index, memory)
            self.attempts.append(attempt)
        self.memory = render_memory(self.attempts)

    def _attempt(self, env: gym.Env, task_id: str, index: int, memory: str) -> Attempt:
        seed = None if self._seed is None else episode_seed(self._seed, task_id, index)
        attempt = Attempt(index)
        engine = RolloutEngine(self.agent, max_turns=self.max_turns, info_keys=None)  # the episode path of every agent
        [played] = engine.run([_WithMemory(env, memory)], [EpisodeSpec(task_id, seed, f"rehearsal:{task_id}",
                                                                      f"rehearsal:{task_id}.{index}", attempt=index)])
        if played.broken:
            raise RuntimeError(f"imagined attempt {index} at {task_id} failed ({played.error_stage}): {played.error}")
        attempt.steps = played.num_turns
        self.stats["simulated_calls"] += sum(len(turn.role_generations) for turn in played.turns)
        last = played.turns[-1] if played.turns else None
        if last is not None and (last.terminated or (last.truncated and played.num_turns < self.max_turns)):
            error = last.info.get("error")
            attempt.ended = "reply" if not error else f"ended early: {error}"
        inner: Any = env.unwrapped  # the RehearsalEnv (its tool log and messages)
        attempt.calls = [(r.name, dict(r.arguments), r.result, bool(r.ok)) for r in inner.tool_log]
        replies = [m for m in inner.messages if m.get("role") == "assistant" and not m.get("tool_calls")]
        attempt.reply = str(replies[-1].get("content") or "") if replies else ""
        self.stats["imagined_attempts"] += 1
        self.stats["imagined_steps"] += attempt.steps
        return attempt

    def _imagined_env(self) -> Any:
        if self._imagined is None:
            assert self._env is not None
            if self.base_env_factory is not None:
                base = self.base_env_factory(self._env)
            else:
                spec = self._env.spec
                if spec is None:
                    raise ValueError(
                        "RehearsingAgent needs a separate copy of the env to rehearse on; make the real env with "
                        "gymnasium.make, or pass base_env_factory=lambda env: <a fresh copy>."
                    )
                base = gym.make(spec.id, **copy.deepcopy(dict(spec.kwargs)))
            self._imagined = RehearsalEnv(base_env=base, world_model=self._backend(), reward_mode="none",
                                          end_on_tool_error=False, use_recorded_examples=False,
                                          sampling=self.sampling, max_prompt_chars=self.max_prompt_chars)
        return self._imagined

    def _backend(self) -> Any:
        if self._world_backend is None:
            spec = self._world_model_spec
            if isinstance(spec, str) and spec == "same":
                backend = getattr(self.agent, "backend", None)
                if backend is None:
                    raise ValueError(
                        f"world_model='same' uses the agent's own backend, but {type(self.agent).__name__} has none; "
                        "pass a backend spec such as world_model='default'."
                    )
                self._world_backend = backend
            elif isinstance(spec, str):
                from agentgym_suite.llm.role_client import role_backend

                self._world_backend = role_backend("world_model", spec, shared=False)
            else:
                self._world_backend = spec
        return self._world_backend

    def _count_real_tool_calls(self) -> None:
        """Add the real calls logged since the last count (the log list of the current real episode)."""
        if self._real_log is not None:
            self.stats["real_tool_calls"] += max(len(self._real_log) - self._counted_tool_log, 0)
            self._counted_tool_log = len(self._real_log)

"""Grounding a world model: recorded examples from real executions on a training split.

The simulator prompt shows (name, arguments, result) examples of the task's tools
(``## Recorded examples``; the released code's few-shot block,
``simulate_core.build_few_shot_examples_lines``). Upstream they are the training sample's own
recorded calls. Here they must never come from an evaluation task, so each tool env names
its training split (:meth:`~agentgym_suite.core.tool_env.ToolEnv.training_tasks`): tau2's
``train`` split, and for benchmarks that publish none (BFCL, VitaBench, FinMCP) a fixed,
hashed holdout of the tasks that evaluations leave out
(:meth:`~agentgym_suite.core.tool_env.ToolEnv.evaluation_tasks`). The oracle plays those
tasks in the real env, and every successful call it makes is recorded: :func:`collect_examples`.

Training worlds whose own task data are training data (SyntheticTools-v0's gold run on a copy
of the world, ChecklistTools-v0's recorded conversation) declare it with
``ToolEnv.examples_are_training_data`` and ground on the task itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from agentgym_suite.envs.shared.canonical_json import canonical

MAX_GROUNDING_TASKS = 8
"""Most training tasks the oracle plays to collect examples (first in id order)."""

DONE_REPLY = "Done."
"""The oracle's text reply once it has no step left: a plain assistant message, which calls no tool."""


@dataclass
class ExampleBank:
    """Recorded examples by tool name, each with the task it was recorded on."""

    examples: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    """The training tasks the examples were recorded on."""

    def for_tools(self, names: Iterable[str], *, exclude_task: str | None = None, per_tool: int = 3,
                  limit: int = 12) -> list[dict[str, Any]]:
        """Examples of the tools in ``names`` (at most ``per_tool`` each, ``limit`` in all), none from ``exclude_task``."""
        wanted, counts, out = set(names), dict[str, int](), []
        for example in self.examples:
            name = example["name"]
            if name not in wanted or example.get("task") == exclude_task or counts.get(name, 0) >= per_tool:
                continue
            counts[name] = counts.get(name, 0) + 1
            out.append({k: example[k] for k in ("name", "arguments", "result")})
            if len(out) >= limit:
                break
        return out

    def to_json(self) -> str:
        """The bank as JSON text (``from_json`` reads it back)."""
        return json.dumps({"tasks": self.tasks, "examples": self.examples}, ensure_ascii=False, default=str)

    @classmethod
    def from_json(cls, text: str) -> ExampleBank:
        """A bank written by :meth:`to_json`."""
        data = json.loads(text)
        return cls(list(data.get("examples", [])), list(data.get("tasks", [])))


def collect_examples(env: Any, task_ids: Sequence[str], *, max_tasks: int = MAX_GROUNDING_TASKS,
                     max_steps: int = 40, seed: int = 0) -> ExampleBank:
    """Play the oracle on ``task_ids`` of the real tool env ``env`` and record its successful calls.

    Each task is one episode of the rollout engine with the suite's oracle agent (the plan it
    makes at reset, then its next step once that runs out), seeded by
    :func:`~agentgym_suite.rollout.seeding.episode_seed` from ``seed``, like every scripted episode.
    Each distinct (name, arguments) is kept once, with the first result seen; calls with error
    results are left out. A task the oracle cannot finish (the engine records the env's error)
    still yields the calls it made before.
    """
    from agentgym_suite.core.tool_env import ToolEnv
    from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
    from agentgym_suite.rollout.oracle_agent import OracleAgent
    from agentgym_suite.rollout.seeding import episode_seed

    base = env.unwrapped
    if not isinstance(base, ToolEnv):
        raise TypeError(f"grounding needs a tool env, got {type(base).__name__}.")
    engine = RolloutEngine(OracleAgent(plan_at_reset=True, when_done=DONE_REPLY), max_turns=max_steps, info_keys=())
    seen: set[tuple[str, str]] = set()
    bank = ExampleBank()
    for task_id in list(task_ids)[:max_tasks]:
        engine.run([env], [EpisodeSpec(task_id, episode_seed(seed, task_id), task_id)])
        bank.tasks.append(task_id)
        for record in base.tool_log:
            if not record.ok:
                continue
            key = (record.name, canonical(record.arguments))
            if key in seen:
                continue
            seen.add(key)
            result = record.result
            if isinstance(result, str):
                try:
                    result = json.loads(result)
                except (json.JSONDecodeError, ValueError):
                    pass
            bank.examples.append({"name": record.name, "arguments": dict(record.arguments), "result": result, "task": task_id})
    return bank


_BANKS: dict[str, ExampleBank] = {}


def cached_bank(key: str, build: Callable[[], ExampleBank]) -> ExampleBank:
    """The bank for ``key`` (an env id and its make kwargs), built once per process."""
    if key not in _BANKS:
        _BANKS[key] = build()
    return _BANKS[key]

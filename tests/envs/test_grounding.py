"""Grounding: every tool env's simulator examples come from real executions on its training split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentgym_suite.registration as registration
from agentgym_suite.methods.envace import RehearsalEnv
from agentgym_suite.core.task_splits import holdout
from agentgym_suite.methods.envace.grounding import ExampleBank
from agentgym_suite.methods.envace.scripted import ScriptedBackend, call_in_prompt

registration.register_all()


def _finmcp(tmp: Path) -> dict[str, Any]:
    from agentgym_suite.envs.finmcp import FinMCPEnv

    return FinMCPEnv.fixture_kwargs(tmp)


CASES = [
    ("BFCL-v0", {"category": "base"}),
    ("Tau2-v0", {"domain": "retail", "split": "test"}),
    ("VitaBench-v0", {"domain": "delivery"}),
    ("FinMCP-v0", "fixtures"),
]


def _world() -> ScriptedBackend:
    return ScriptedBackend(lambda name, args: '<execution_result>\n{"ok": true}\n</execution_result>')


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[c[0] for c in CASES])
def test_benchmark_examples_come_from_oracle_runs_on_the_training_split(env_id: str, kwargs: Any, tmp_path: Path) -> None:
    if kwargs != "fixtures" and registration.missing_requirements(registration.entry(env_id)):
        pytest.skip(f"{env_id} is not installed here")
    kwargs = _finmcp(tmp_path) if kwargs == "fixtures" else kwargs
    env = RehearsalEnv(base_env=env_id, base_env_kwargs=kwargs, world_model=_world())
    assert env.grounding_mode() == "training"
    overrides, training = env.env.training_tasks()
    evaluation = env.env.evaluation_tasks()
    if not overrides:
        assert not set(training) & set(evaluation)  # the holdout is never evaluated
    task = evaluation[0]
    env.reset(options={"task_id": task})
    bank = env.example_bank()
    assert bank.examples, f"{env_id}: the oracle runs on the training split recorded nothing"
    assert set(bank.tasks) <= set(training) and task not in bank.tasks
    assert all(e["task"] in training for e in bank.examples)
    offered = set(env.env.tool_index)
    assert all(e["name"] in offered for e in env._examples)


def test_tau2_grounds_on_its_published_train_split() -> None:
    env = RehearsalEnv(base_env="Tau2-v0", base_env_kwargs={"domain": "retail", "split": "test"}, world_model=_world())
    overrides, training = env.env.training_tasks()
    assert overrides == {"split": "train"} and not set(training) & set(env.env.task_ids())
    env.reset(options={"task_id": env.env.task_ids()[0]})
    assert env._examples and "## Recorded examples\n<unavailable>" not in _prompt_of(env)


def _prompt_of(env: RehearsalEnv) -> str:
    backend = env.world_model.backend
    action = env.oracle()[0] if "<tool_call>" in env.oracle()[0] else next(a for a in env.oracle() if "<tool_call>" in a)
    env.step(action)
    assert backend.calls
    return str(env.episode_generations[-1].prompt_messages[1]["content"])


def test_training_worlds_ground_on_the_task_itself() -> None:
    env = RehearsalEnv(world_model=_world(), base_env_kwargs={"seed": 0})
    env.reset(options={"task_id": "w0-t0"})
    assert env.grounding_mode() == "task" and env._examples == env.env.recorded_examples()


def test_holdout_is_fixed_and_a_fifth_and_banks_round_trip() -> None:
    ids = [str(i) for i in range(500)]
    chosen = holdout(ids)
    assert chosen == holdout(list(reversed(ids)))[::-1] or set(chosen) == set(holdout(list(reversed(ids))))
    assert 0.12 < len(chosen) / len(ids) < 0.28
    bank = ExampleBank([{"name": "f", "arguments": {"a": 1}, "result": {"r": 2}, "task": "t1"},
                        {"name": "f", "arguments": {"a": 2}, "result": {"r": 3}, "task": "t2"}], ["t1", "t2"])
    assert ExampleBank.from_json(bank.to_json()) == bank
    assert bank.for_tools(["f"], exclude_task="t1") == [{"name": "f", "arguments": {"a": 2}, "result": {"r": 3}}]
    assert call_in_prompt  # the scripted backend reads the call back from the prompt it gets


def test_grounding_plays_the_oracle_agent_through_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grounding is a scripted episode like any other: the rollout engine plays the one oracle
    agent, each task seeded by episode_seed, and the bank records the calls the engine's episodes made."""
    import gymnasium

    from agentgym_suite.methods.envace.grounding import collect_examples
    from agentgym_suite.rollout import RolloutEngine
    from agentgym_suite.rollout.oracle_agent import OracleAgent
    from agentgym_suite.rollout.seeding import episode_seed

    played: list[tuple[str, int, int]] = []
    run = RolloutEngine.run

    def recording_run(self: RolloutEngine, envs: Any, specs: Any, **kwargs: Any) -> Any:
        assert isinstance(self.policy.agent, OracleAgent) and self.policy.agent.plan_at_reset
        out = run(self, envs, specs, **kwargs)
        played.extend((s.task_id, s.seed, len(t.turns)) for s, t in zip(specs, out))
        return out

    monkeypatch.setattr(RolloutEngine, "run", recording_run)
    env = gymnasium.make("BFCL-v0", category="base")
    tasks = env.unwrapped.task_ids()[:3]
    bank = collect_examples(env, tasks, seed=7)
    assert [(t, s) for t, s, _ in played] == [(t, episode_seed(7, t)) for t in tasks]
    assert all(turns > 0 for *_, turns in played) and bank.tasks == tasks
    assert bank.examples and {e["task"] for e in bank.examples} <= set(tasks)

"""RehearsingAgent: imagined attempts touch only the world model; exactly one real execution per task."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest

import agentgym_suite.registration as registration
from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.methods.envace import RehearsalEnv
from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.methods.envace.rehearsing_agent import Attempt, RehearsingAgent, render_memory, with_memory
from agentgym_suite.methods.envace import format_execution_result
from agentgym_suite.methods.envace.scripted import ScriptedBackend
from agentgym_suite.evaluation.runner import evaluate

registration.register_all()


class CountingEnv(gymnasium.Wrapper):
    """Counts resets and steps of the real env."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.resets = self.steps = 0

    def reset(self, **kwargs: Any):  # type: ignore[override]
        self.resets += 1
        return self.env.reset(**kwargs)

    def step(self, action: str):  # type: ignore[override]
        self.steps += 1
        return self.env.step(action)


class RecordingAgent(OracleAgent):
    """The oracle, remembering every info it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.infos: list[dict[str, Any]] = []

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.infos.append(info)
        return super().act(observation, info)


def _world() -> ScriptedBackend:
    return ScriptedBackend(lambda name, args: format_execution_result({"imagined": name}))


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
def test_one_real_execution_per_task(mode: str) -> None:
    real = CountingEnv(gymnasium.make("SyntheticTools-v0", seed=0))
    inner = RecordingAgent()
    world = _world()
    agent = RehearsingAgent(inner, world, budget=2, mode=mode, max_turns=6)
    for task_id in ["w0-t0", "w0-t1"]:
        obs, info = real.reset(seed=1, options={"task_id": task_id})
        agent.reset(real, seed=1)
        done = False
        while not done:
            obs, reward, done, _, info = real.step(agent.act(obs, info))
        assert info["won"]  # the oracle wins the one real execution
        assert len(agent.attempts) == 2
    stats = agent.rehearsal_stats()
    assert real.resets == 2 and stats["real_steps"] == real.steps
    assert stats["imagined_attempts"] == 4 and stats["simulated_calls"] == len(world.calls) > 0
    assert stats["real_tool_calls"] == real.steps - 2  # every real step but the closing reply is one call
    first_real = [i for i in inner.infos if "rehearsal_memory" in i and i["rehearsal_memory"]]
    assert len(first_real) >= 2 and "# Private rehearsal" in first_real[-1]["messages"][0]["content"]
    documented = (real, RehearsalEnv, RehearsingAgent)  # the real env's, the imagined attempts' and the agent's keys
    assert not [undocumented_keys(i, *documented) for i in inner.infos if undocumented_keys(i, *documented)]
    if mode == "sequential":  # the second attempt started with the first one's memory
        assert any("Attempt 1" in (i.get("rehearsal_memory") or "") and "Attempt 2" not in i["rehearsal_memory"]
                   for i in inner.infos)


def test_rehearsal_does_not_touch_the_real_env_state() -> None:
    real = gymnasium.make("SyntheticTools-v0", seed=0)
    _, info = real.reset(options={"task_id": "w0-t0"})
    before = real.unwrapped.database()
    agent = RehearsingAgent(OracleAgent(), _world(), budget=3)
    agent.reset(real, seed=0)
    agent._rehearse("w0-t0")
    assert real.unwrapped.database() == before and real.unwrapped.tool_log == []
    assert len(agent.attempts) == 3 and all(a.calls for a in agent.attempts)


def test_memory_rendering_and_plan_selection() -> None:
    bad = Attempt(0, calls=[("a", {"x": 1}, {"error_tool_call": {"code": "X"}}, False)], ended="reply")
    good = Attempt(1, calls=[("b", {"y": 2}, {"ok": True}, True)], reply="done", ended="reply")
    text = render_memory([bad, good])
    assert "Attempt 1" in text and "[error]" in text and "reply: done" in text
    assert text.split("## Suggested plan (from attempt 2)")[1].strip() == '1. b {"y": 2}'
    info = with_memory({"messages": [{"role": "user", "content": "hi"}]}, text)
    assert info["messages"][0]["content"].startswith("# Private rehearsal") and info["messages"][0]["content"].endswith("hi")


def test_bad_configuration_is_explained() -> None:
    with pytest.raises(ValueError, match="mode"):
        RehearsingAgent(OracleAgent(), "tiny", mode="dreamy")
    agent = RehearsingAgent(OracleAgent(), "same", budget=1)
    env = gymnasium.make("SyntheticTools-v0")
    env.reset(seed=0)
    agent.reset(env, seed=0)
    with pytest.raises(ValueError, match="agent's own backend"):
        agent._rehearse("w0-t0")


def test_eval_runner_wraps_the_agent_and_reports_counts(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    world = _world()
    monkeypatch.setattr("agentgym_suite.llm.load_backend", lambda spec, **kw: world)
    result = evaluate("SyntheticTools-v0", "oracle", out_dir=tmp_path, episodes=2, progress=False,
                      extensions={"rehearsal": {"budget": 2, "mode": "sequential", "world_model": "scripted"}})
    stats = result.summary["rehearsal"]
    assert stats["imagined_attempts"] == 4 and stats["episodes"] == 2
    assert stats["real_steps"] == sum(len(r.turns) for r in result.records)
    assert all(r.won for r in result.records)
    assert json.loads((tmp_path / "config.json").read_text())["rehearsal"]["mode"] == "sequential"


def test_eval_cli_flags(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from agentgym_suite.cli import main

    monkeypatch.setattr("agentgym_suite.llm.load_backend", lambda spec, **kw: _world())
    code = main(["eval", "SyntheticTools-v0", "--agent", "oracle", "--episodes", "1", "--out", str(tmp_path), "--json",
                 "--no-progress", "--rehearsal-budget", "2", "--rehearsal-mode", "parallel", "--rehearsal-world-model", "x"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["rehearsal"]["imagined_attempts"] == 2 and summary["rehearsal"]["mode"] == "parallel"
    assert main(["eval", "SyntheticTools-v0", "--out", str(tmp_path / "b"), "--rehearsal-budget", "-1"]) == 2


@pytest.mark.parametrize("env_id,kwargs", [("Tau2-v0", {"domain": "retail", "split": "test"}), ("BFCL-v0", {"category": "simple"})])
def test_held_out_benchmarks_are_scored_by_their_own_check_with_and_without_rehearsal(
        env_id: str, kwargs: dict[str, Any], tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    if registration.missing_requirements(registration.entry(env_id)):
        pytest.skip(f"{env_id} is not installed here")
    world = ScriptedBackend(lambda name, args: format_execution_result({"ok": True}))
    monkeypatch.setattr("agentgym_suite.llm.load_backend", lambda spec, **kw: world)
    plain = evaluate(env_id, "oracle", out_dir=tmp_path / "plain", episodes=2, env_kwargs=kwargs, progress=False)
    rehearsed = evaluate(env_id, "oracle", out_dir=tmp_path / "rehearsed", episodes=2, env_kwargs=kwargs, progress=False,
                         extensions={"rehearsal": {"budget": 1, "mode": "parallel", "world_model": "scripted"}})
    # the env's own check decides both runs: the oracle's real execution is the same with or without rehearsal
    assert [r.won for r in plain.records] == [r.won for r in rehearsed.records] and any(r.won for r in plain.records)
    assert rehearsed.summary["rehearsal"]["imagined_attempts"] == 2 and "rehearsal" not in plain.summary
    assert world.calls  # the imagined attempts were answered by the world model, the real ones by the env

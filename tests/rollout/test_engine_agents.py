"""RolloutEngine with an agent as its policy: one-at-a-time and batched agents, their reports,
seeds, failures by stage, and the env pool replacing envs that failed."""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import pytest

from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine

from .fakes import CounterEnv


class CountingAgent:
    """Says ``action`` and reports its prompt and token count; raises on a task (or in reset)."""

    name = "counting"

    def __init__(self, fail_on: str | None = None, fail_reset: bool = False, action: str = "next") -> None:
        self.fail_on, self.fail_reset, self.action = fail_on, fail_reset, action
        self.seeds: list[int | None] = []
        self.last_turn: dict[str, Any] | None = None

    def reset(self, env: gym.Env, *, seed: int | None = None) -> None:
        if self.fail_reset:
            raise ConnectionError("the agent's server is down")
        self.seeds.append(seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if info["task_id"] == self.fail_on:
            raise ConnectionError("backend unreachable")
        self.last_turn = {"prompt": [{"role": "user", "content": observation}], "completion_tokens": 3}
        return self.action


class LockstepAgent:
    """A batched agent that records every call; ``fail_at`` makes that act_batch call raise."""

    name = "batched"

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at = fail_at
        self.calls: list[tuple[str, Any]] = []
        self.last_turns: list[dict[str, Any]] = []
        self._slots: list[str] = []

    def reset_batch(self, envs: Sequence[gym.Env], *, seed: int | None = None) -> None:
        self._slots = [""] * len(envs)
        self.calls.append(("reset_batch", (len(envs), seed)))

    def act_batch(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        assert len(observations) == len(self._slots), "keep_slots must narrow the batch before the call"
        self.calls.append(("act_batch", [i["task_id"] for i in infos]))
        if len([c for c in self.calls if c[0] == "act_batch"]) == self.fail_at:
            raise RuntimeError("the batch call failed")
        self.last_turns = [{"prompt": f"prompt for {i['task_id']}", "thinking": "plan", "completion_tokens": 2}
                           for i in infos]
        return ["next"] * len(observations)

    def keep_slots(self, indices: Sequence[int]) -> None:
        self.calls.append(("keep_slots", list(indices)))
        self._slots = [self._slots[i] for i in indices]


def _specs(task_ids: Sequence[str]) -> list[EpisodeSpec]:
    return [EpisodeSpec(t, 100 + i, t, f"{t}#0") for i, t in enumerate(task_ids)]


def test_an_agent_plays_through_the_engine_and_its_reports_land_on_the_turns() -> None:
    action = "<think>count down</think><action>next</action>"
    agent = CountingAgent(action=action)
    engine = RolloutEngine(agent, max_turns=5, info_keys=None)
    [traj] = engine.run([CounterEnv(action_format="think_action")], _specs(["c2"]))
    assert traj.won and traj.terminated and traj.error is None and traj.mode == "agent" and not traj.token_ids
    assert [t.completion_text for t in traj.turns] == [action] * 2
    assert [t.thinking for t in traj.turns] == ["count down"] * 2  # taken from the action's <think> block
    assert traj.turns[1].prompt == [{"role": "user", "content": "1 steps to go."}] and traj.turns[1].prompt_text == ""
    assert traj.completion_tokens == 6 and engine.stats.completion_tokens == 6 and engine.stats.generate_calls == 2
    assert traj.turns[0].info["won"] is False and "admissible_actions" not in traj.turns[0].info  # every scalar kept
    assert traj.policy_s > 0 and traj.wall_s >= traj.policy_s and agent.seeds == [100]


def test_a_one_at_a_time_agent_is_refused_several_envs() -> None:
    with pytest.raises(ValueError, match="one by one"):
        RolloutEngine(CountingAgent()).run([CounterEnv(), CounterEnv()], _specs(["c1", "c2"]))


def test_backend_settings_with_an_agent_are_refused() -> None:
    with pytest.raises(ValueError, match="makes its own prompts"):
        RolloutEngine(CountingAgent(), mode="chat")
    with pytest.raises(TypeError, match="neither a generation backend"):
        RolloutEngine(object())


def test_agent_failures_are_recorded_with_their_stage() -> None:
    [acting] = RolloutEngine(CountingAgent(fail_on="c2")).run([CounterEnv()], _specs(["c2"]))
    assert acting.error_stage == "agent" and acting.error.startswith("ConnectionError: backend unreachable")
    assert acting.turns == [] and acting.broken and not acting.won
    [resetting] = RolloutEngine(CountingAgent(fail_reset=True)).run([CounterEnv()], _specs(["c1"]))
    assert resetting.error_stage == "agent" and "the agent's server is down" in resetting.error


def test_a_batched_agent_plays_in_lockstep_and_drops_finished_episodes() -> None:
    agent = LockstepAgent()
    engine = RolloutEngine(agent, max_turns=5)
    trajectories = engine.run([CounterEnv() for _ in range(3)], _specs(["c3", "c1", "c2"]))
    assert [t.num_turns for t in trajectories] == [3, 1, 2] and all(t.won for t in trajectories)
    # one reset with the first episode's seed, one call per turn; finished episodes leave the batch
    assert agent.calls == [("reset_batch", (3, 100)), ("act_batch", ["c3", "c1", "c2"]), ("keep_slots", [0, 2]),
                           ("act_batch", ["c3", "c2"]), ("keep_slots", [0]), ("act_batch", ["c3"])]
    first = trajectories[0].turns[0]
    assert (first.prompt_text, first.thinking, first.completion_tokens) == ("prompt for c3", "plan", 2)
    assert engine.stats.generate_calls == 3


def test_a_reset_failure_leaves_the_batch_to_the_others_and_a_failing_call_fails_its_episodes() -> None:
    agent = LockstepAgent(fail_at=2)
    boom, ok, late = RolloutEngine(agent).run([_BrokenReset(), CounterEnv(), CounterEnv()], _specs(["c1", "c1", "c3"]))
    assert boom.error_stage == "reset" and "no such game" in boom.error and boom.turns == []
    assert agent.calls[0] == ("reset_batch", (2, 101))  # the envs that reset; the first of them gives the seed
    assert ok.won and ok.error is None
    assert late.error_stage == "agent" and "the batch call failed" in late.error and late.num_turns == 1


class _BrokenReset(CounterEnv):
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        raise FileNotFoundError("no such game")


class _Counted(CounterEnv):
    made = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _Counted.made += 1


def test_the_env_pool_replaces_envs_after_env_side_failures_only() -> None:
    if "CountedCounter-v0" not in gym.registry:
        gym.register("CountedCounter-v0", entry_point=_Counted)
    pool = EnvPool()
    before = _Counted.made
    RolloutEngine(CountingAgent(fail_on="c1"), env_pool=pool).run_specs("CountedCounter-v0", _specs(["c1"]))
    assert _Counted.made - before == 1  # an agent failure leaves the env in use
    [crashed] = RolloutEngine(CountingAgent(), env_pool=pool).run_specs("CountedCounter-v0", _specs(["boom"]))
    assert crashed.error_stage == "step"
    [after] = RolloutEngine(CountingAgent(), env_pool=pool).run_specs("CountedCounter-v0", _specs(["c1"]))
    assert after.won and _Counted.made - before == 2  # the env that raised was replaced
    pool.close()
    with pytest.raises(ValueError, match="EnvPool"):
        RolloutEngine(CountingAgent(), env_pool=pool, step_timeout=5)


def test_the_protocols_name_what_the_engine_drives() -> None:
    from agentgym_suite.agents import Agent, BatchedAgent
    from agentgym_suite.rollout.policies import AgentPolicy, supports_batches

    assert isinstance(CountingAgent(), Agent) and not supports_batches(CountingAgent())
    assert isinstance(LockstepAgent(), BatchedAgent) and supports_batches(LockstepAgent())
    assert AgentPolicy(LockstepAgent()).max_episodes is None and AgentPolicy(CountingAgent()).max_episodes == 1


def test_every_env_of_a_turn_is_reset_and_stepped_in_one_call() -> None:
    """The seam a parallel env executor replaces: one reset call per run, one step call per turn."""

    class Recording(RolloutEngine):
        batches: list[tuple[str, int]] = []

        def _reset_envs(self, calls: list[Any]) -> list[Any]:
            self.batches.append(("reset", len(calls)))
            return super()._reset_envs(calls)

        def _step_envs(self, calls: list[Any]) -> list[Any]:
            self.batches.append(("step", len(calls)))
            return super()._step_envs(calls)

    engine = Recording(LockstepAgent())
    engine.run([CounterEnv() for _ in range(3)], _specs(["c2", "c3", "c1"]))
    assert engine.batches == [("reset", 3), ("step", 3), ("step", 2), ("step", 1)]

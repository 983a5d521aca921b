"""RolloutEngine fields a trainer reads: anchor state, oracle at the prompt state, env-rendered
prompts with role/position, simulator generations, and prompt truncation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

from agentgym_suite.core.role_generation import RoleGeneration
from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine, Trajectory

from .fakes import CounterEnv, ScriptedBackend

GREEDY = SamplingParams(temperature=0, max_new_tokens=6)


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


class RenderedRoles(gym.Wrapper):
    """Renders its own prompts and reports a role, a position and per-position rewards, like a
    SkillRise trial; each step also carries a generation of a role of its own (one as a record, one as its dict)."""

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._n = 0
        return "PROMPT 0", self._info(info, obs)

    def step(self, action: str):
        obs, reward, term, trunc, info = self.env.step(action)
        self._n += 1
        info = self._info(info, obs)
        info["role_generations"] = [RoleGeneration("echo", turn=self._n, completion_ids=[1]),
                                    RoleGeneration("echo", turn=-self._n).to_dict()]
        info["position_rewards"] = {str(self._n - 1): float(reward)}
        return f"PROMPT {self._n}", reward, term, trunc, info

    def _info(self, info: dict[str, Any], obs: str) -> dict[str, Any]:
        out = dict(info)
        out.update(role="solve" if self._n % 2 == 0 else "curate", position=self._n // 2, raw_observation=obs,
                   prompt_messages=[{"role": "user", "content": f"rendered prompt {self._n}"}])
        return out


def test_state_and_oracle_are_recorded_at_the_prompt_state(tiny):
    engine = RolloutEngine(ScriptedBackend(tiny, ["next"]), mode="single", sampling=GREEDY, max_turns=5,
                           record_oracle=True, info_keys=("task",))
    [traj] = engine.run([CounterEnv()], [EpisodeSpec("c2", 0, "g")])
    assert [t.state for t in traj.turns] == ["Counter c2 starts.", "1 steps to go."]
    assert [t.oracle for t in traj.turns] == [["next"], ["next"]]
    assert traj.task == "Take 2 steps." and traj.reset_info == {"task": "Take 2 steps."}
    plain = RolloutEngine(ScriptedBackend(tiny, ["next"]), mode="single", sampling=GREEDY, max_turns=5)
    assert all(t.oracle is None for t in plain.run([CounterEnv()], [EpisodeSpec("c2", 0, "g")])[0].turns)


@pytest.mark.parametrize("mode", ["single", "chat"])
def test_env_rendered_prompts_roles_positions_and_role_generations(tiny, mode):
    engine = RolloutEngine(ScriptedBackend(tiny, ["next"]), mode=mode, sampling=GREEDY, max_turns=5)
    [traj] = engine.run([RenderedRoles(CounterEnv())], [EpisodeSpec("c3", 0, "g")])
    assert [t.role for t in traj.turns] == ["solve", "curate", "solve"]
    assert [t.position for t in traj.turns] == [0, 0, 1]
    assert [f"rendered prompt {k}" in t.prompt_text for k, t in enumerate(traj.turns)] == [True] * 3
    assert [[g.turn for g in t.role_generations] for t in traj.turns] == [[1, -1], [2, -2], [3, -3]]
    assert traj.position_rewards == {2: 1.0}
    assert not traj.token_ids, "an env that renders its prompts is played turn by turn"
    again = Trajectory.from_dict(traj.to_dict())
    assert again.position_rewards == {2: 1.0} and again.turns[1].role == "curate"
    assert again.turns[2].role_generations == traj.turns[2].role_generations


def test_max_prompt_tokens_keeps_the_newest_tokens(tiny):
    backend = ScriptedBackend(tiny, ["next"])
    engine = RolloutEngine(backend, mode="single", sampling=GREEDY, max_turns=1, max_prompt_tokens=12)
    [traj] = engine.run([CounterEnv()], [EpisodeSpec("c1", 0, "g")])
    full = backend.encode(traj.turns[0].prompt_text)
    assert len(full) > 12 and traj.turns[0].prompt_ids == full[-12:]
    with pytest.raises(ValueError, match="max_prompt_tokens"):
        RolloutEngine(backend, max_prompt_tokens=0)


class UncuttablePrompts(gym.Wrapper):
    """Renders a long prompt of its own and forbids cutting it (as SkillRise trials do)."""

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return obs, dict(info, prompt_messages=[{"role": "user", "content": "skill document " * 40}],
                         prompt_truncation="error")


def test_a_prompt_the_env_forbids_cutting_fails_its_episode_instead(tiny):
    engine = RolloutEngine(ScriptedBackend(tiny, ["next"]), mode="single", sampling=GREEDY, max_turns=1,
                           max_prompt_tokens=12)
    [traj] = engine.run([UncuttablePrompts(CounterEnv())], [EpisodeSpec("c1", 0, "g")])
    assert not traj.turns and "forbids cutting it" in (traj.error or ""), traj.error
    roomy = RolloutEngine(ScriptedBackend(tiny, ["next"]), mode="single", sampling=GREEDY, max_turns=1,
                          max_prompt_tokens=4096)
    [ok] = roomy.run([UncuttablePrompts(CounterEnv())], [EpisodeSpec("c1", 0, "g")])
    assert ok.turns and ok.error is None

"""EnvACE training wiring: the policy plays the world model of EnvACE-Rehearsal-v0 and its
simulator generations are trained as ``simulator`` rows with the Caller's trajectory score."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest

from agentgym_suite.trainers import AgentGRPOTrainer
from agentgym_suite.trainers.agent_grpo import default_env_factory
from trainers.conftest import changed, snapshot

BASE_KWARGS = {"num_worlds": 1, "tasks_per_world": 2, "num_tools": 5, "distractors": 0, "seed": 0}
REHEARSAL_KWARGS = {"base_env_kwargs": BASE_KWARGS, "sampling": {"max_new_tokens": 6}, "max_prompt_chars": 1200}


class OracleFirstCall(gym.Wrapper):
    """Test caller: the first message of an episode is the oracle's first tool call (a tiny random
    model never writes one), so the world model has calls to answer; the episode's return is
    then set from the model's own text so that returns vary within a group."""

    def reset(self, **kwargs):
        self._first = True
        return self.env.reset(**kwargs)

    def step(self, action):
        sent = self.env.unwrapped.oracle()[0] if self._first else action
        self._first = False
        obs, _, terminated, truncated, info = self.env.step(sent)
        reward = float(len(action) % 3) if terminated or truncated else 0.0
        return obs, reward, terminated, truncated, info


def _config(make_config, **overrides):
    values = dict(env_id="SyntheticTools-v0", env_mode="rehearsal", credit="envace", env_kwargs=REHEARSAL_KWARGS,
                  max_turns=1, max_prompt_tokens=1024, beta=0.0)
    values.update(overrides)
    return make_config(**values)


def _logged(trainer, key):
    return [h[key] for h in trainer.state.log_history if key in h]


def test_rehearsal_trains_caller_and_simulator_rows(make_config, tmp_path):
    args = _config(make_config)
    base = default_env_factory(args)
    trainer = AgentGRPOTrainer(args=args, env_factory=lambda: OracleFirstCall(base()))
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 2
    envs = [env.unwrapped for env in trainer._envs]
    assert envs and all(env.world_model.name == "policy" for env in envs), "the policy must be the world model"
    assert all(env.world_model.backend.model is trainer.model for env in envs)
    ratios = _logged(trainer, "credit/envace/simulator_row_ratio")
    assert ratios and all(r > 0 for r in ratios), ratios
    assert all(n > 0 for n in _logged(trainer, "episodes/generation_rows"))
    losses = _logged(trainer, "loss")
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    assert changed(before, trainer.model)
    lines = [json.loads(x) for x in (tmp_path / "run" / "trajectories" / "step_000001.jsonl").read_text().splitlines()]
    assert sum(t["role_generations"] for line in lines for t in line["turns"]) > 0


def test_simulator_rows_share_the_trajectory_score():
    from agentgym_suite.rollout.records import Trajectory, Turn
    from agentgym_suite.trainers.rows import build_rows

    from agentgym_suite.methods.envace.generation import SimulatorGeneration

    gen = SimulatorGeneration("search", turn=1, prompt_ids=[1, 2], completion_ids=[3, 4], logprobs=[-0.1, -0.2],
                              has_token_ids=True, contract_valid=True, finish_reason="length", completion_text="x")
    turn = Turn(index=0, prompt_text="p", completion_text="a", prompt_ids=[5], completion_ids=[6], logprobs=[-1.0],
                state="o", role_generations=[gen.as_role_generation()] * 2)
    traj = Trajectory(task_id="w0-t0", group_id="g", env_id="EnvACE-Rehearsal-v0", seed=0, traj_id="t",
                      turns=[turn], episode_return=0.75)
    for layout in ("turn", "trajectory"):
        rows = build_rows([traj], layout, generation_roles=("caller", "simulator"))
        assert [r.role for r in rows] == ["agent", "simulator", "simulator"]
        assert {r.ret for r in rows} == {0.75} and {r.group for r in rows} == {"g"}
        assert [r.turn_idx for r in rows[1:]] == [0, 1] and rows[1].turns[0].finish_reason == "length"
        assert rows[1].prompt_ids == [1, 2] and rows[1].completion_ids == [3, 4]
    assert [r.role for r in build_rows([traj], "turn")] == ["agent"]


@pytest.mark.slow
def test_synthetic_mode_trains(make_config, tmp_path):
    args = make_config(env_id="SyntheticTools-v0", env_mode="synthetic", env_kwargs=BASE_KWARGS, max_turns=2,
                       max_prompt_tokens=3000)
    trainer = AgentGRPOTrainer(args=args)
    trainer.train()
    assert trainer.state.global_step == 2 and trainer.env_id == "SyntheticTools-v0"
    losses = _logged(trainer, "loss")
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    lines = [json.loads(x) for x in (tmp_path / "run" / "trajectories" / "step_000002.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and all(line["turns"] for line in lines)
    assert {line["task_id"] for line in lines} <= {"w0-t0", "w0-t1"}


def test_envace_keeps_its_own_released_empty_row_penalty(make_config):
    from agentgym_suite.trainers.agent_grpo import build_credit

    assert build_credit(make_config(credit="envace", invalid_action_penalty=0.5)).config.invalid_penalty == 0.1
    assert build_credit(make_config(credit="grpo", invalid_action_penalty=0.5)).config.invalid_penalty == 0.5

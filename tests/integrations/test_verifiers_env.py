"""``Verifiers-v0``: small verifiers environments defined in the tests (tests/integrations/vf_toy_envs.py),
played as suite envs, trained two steps with the suite's trainer, and broken on purpose."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

pytest.importorskip("verifiers")

import agentgym_suite  # noqa: F401,E402
from agentgym_suite.integrations.verifiers import VerifiersEpisodeError  # noqa: E402

TOY = "integrations.vf_toy_envs"


def test_a_single_turn_env_pays_its_rubric_reward() -> None:
    env = gym.make("Verifiers-v0", env=TOY, kind="exact")
    try:
        assert env.unwrapped.task_ids() == ["0", "1", "2", "3"]
        obs, info = env.reset(options={"task_id": "1"})
        assert obs.startswith("What is 3 + 4?") and info["messages"][0] == {"role": "system", "content": "Answer tersely."}
        assert info["verifiers_not_carried_over"]
        _, reward, terminated, truncated, info = env.step("7")
        assert (reward, terminated, truncated, info["won"]) == (1.0, True, False, True)
        assert info["verifiers_metrics"]["exact_match"] == 1.0 and info["messages"][-1] == {"role": "assistant", "content": "7"}
        env.reset(options={"task_id": "1"})
        _, reward, terminated, _, info = env.step("8")
        assert (reward, terminated, info["won"]) == (0.0, True, False)
    finally:
        env.close()


def test_a_multi_turn_env_answers_each_turn_and_ends_on_its_own_condition() -> None:
    env = gym.make("Verifiers-v0", env=TOY, kind="guess")
    try:
        env.reset(options={"task_id": "1"})  # secret 8
        obs, reward, terminated, _, info = env.step("5")
        assert obs == "No: higher." and not terminated and reward == 0.0
        obs, reward, terminated, _, info = env.step("9")
        assert obs == "No: lower." and not terminated
        _, reward, terminated, _, info = env.step("8")
        assert terminated and reward == 1.0 and info["won"] and info["verifiers_stop"] == "has_final_env_response"
        env.reset(options={"task_id": "0"})
        for guess in ("1", "2", "9", "4"):
            _, reward, terminated, _, info = env.step(guess)
        assert terminated and reward == 0.0 and info["verifiers_stop"] == "max_turns_reached"
    finally:
        env.close()


def test_an_env_that_raises_is_a_clear_episode_error_and_the_next_reset_works() -> None:
    env = gym.make("Verifiers-v0", env=TOY, kind="raises")
    try:
        env.reset(options={"task_id": "0"})
        with pytest.raises(VerifiersEpisodeError, match="raised RuntimeError: the environment broke on purpose"):
            env.step("4")
        obs, _ = env.reset(options={"task_id": "1"})
        assert obs.startswith("Guess my number")
    finally:
        env.close()


def test_an_env_that_hangs_is_a_clear_episode_error() -> None:
    env = gym.make("Verifiers-v0", env=TOY, kind="hangs", turn_timeout=0.5)
    try:
        env.reset(options={"task_id": "0"})
        with pytest.raises(VerifiersEpisodeError, match="no next turn within 0.5 s"):
            env.step("4")
        obs, _ = env.reset(options={"task_id": "1"})
        assert obs.startswith("Guess my number")
    finally:
        env.close()


def test_hostile_actions_are_played_not_crashed() -> None:
    env = gym.make("Verifiers-v0", env=TOY, kind="guess")
    try:
        env.reset(options={"task_id": "2"})
        obs, _, terminated, _, info = env.step("\x00" * 10)
        assert not info["action_valid"] and not terminated  # the suite's own refusal: no visible text
        obs, _, terminated, _, info = env.step("🙂" * 500_000)
        assert not info["action_valid"] and not terminated and "long" in info["invalid_reason"]
        obs, _, _, _, info = env.step('<tool_call>{"name": "rm", "arguments": {}}</tool_call>')
        assert obs == "No: a number, please."  # no tools in this env: the text is a plain reply
        _, reward, terminated, _, info = env.step("5")
        assert terminated and reward == 1.0 and len([m for m in info["messages"] if m["role"] == "assistant"]) == 2
    finally:
        env.close()


def test_bad_settings_say_what_to_fix() -> None:
    with pytest.raises(ValueError, match="choose 'eval' or 'train'"):
        gym.make("Verifiers-v0", env=TOY, split="test")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["exact", "guess"])
def test_the_suite_trainer_trains_two_steps_on_a_verifiers_env(tmp_path, kind: str) -> None:
    from agentgym_suite.trainers import AgentGRPOTrainer
    from trainers.conftest import changed, snapshot, tiny_config

    config = tiny_config(str(tmp_path / "run"), env_id="Verifiers-v0", env_kwargs={"env": TOY, "kind": kind, "shaped": True},
                         max_turns=5)  # room for the guess env to end on its own (4 turns)
    trainer = AgentGRPOTrainer(args=config)
    before = snapshot(trainer.model)
    trainer.train()
    assert trainer.state.global_step == 2 and changed(before, trainer.model)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    logged = set().union(*(h.keys() for h in trainer.state.log_history))
    assert "episodes/return_mean" in logged


def test_agentgym_eval_plays_it_unchanged(tmp_path) -> None:
    """The eval runner, with the oracle agent (the row's reference answer), wins every exact-match task."""
    from agentgym_suite.evaluation.runner import evaluate

    result = evaluate("Verifiers-v0", "oracle", out_dir=tmp_path / "eval", env_kwargs={"env": TOY, "kind": "exact"},
                      progress=False)
    assert len(result.records) == 4 and all(r.won and r.episode_return == 1.0 for r in result.records)

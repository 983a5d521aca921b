"""EnvACE-Rehearsal-v0 with the tiny random model: episodes run and generations carry exact token ids."""

from __future__ import annotations

import gymnasium
import pytest

import agentgym_suite.registration as registration
from agentgym_suite.methods.envace.generation import simulator_generations
from agentgym_suite.rollout.records import Trajectory, Turn
from agentgym_suite.trainers.rows import generation_rows_of

registration.register_all()


@pytest.fixture(scope="module")
def tiny_env() -> gymnasium.Env:
    return gymnasium.make("EnvACE-Rehearsal-v0", world_model="tiny", base_env_kwargs={"seed": 0, "num_tools": 5, "distractors": 0},
                          sampling={"max_new_tokens": 8, "temperature": 1.0}, max_prompt_chars=3000)


def test_tiny_world_model_records_exact_token_ids(tiny_env: gymnasium.Env) -> None:
    env = tiny_env.unwrapped
    tiny_env.reset(seed=1, options={"task_id": "w0-t0"})
    block = '\n<tool_call>\n{"name": "search_vehicles", "arguments": {"query": "%s"}}\n</tool_call>'
    obs, reward, terminated, _, info = tiny_env.step(block % "Quiet Raven" + block % "Other")
    gens = simulator_generations(info)
    assert len(gens) == 2 and env.world_model.loaded
    backend = env.world_model.backend
    for gen in gens:
        assert gen.trainable and len(gen.logprobs) == len(gen.completion_ids)
        assert backend.decode(gen.completion_ids) == gen.completion_text
        assert backend.encode(gen.prompt_text) == gen.prompt_ids
        assert backend.decode(gen.prompt_ids, skip_special_tokens=False) == gen.prompt_text
        assert "## Tool call to simulate" in gen.prompt_text
    # random weights never meet the contract: the episode ends with reward 0, as EnvACE specifies
    assert terminated and reward == 0.0 and not gens[0].contract_valid
    turn = Turn(index=0, prompt_text="", completion_text="", role_generations=[g.as_role_generation() for g in env.episode_generations])
    rows = generation_rows_of(Trajectory("w0-t0", "g", "EnvACE-Rehearsal-v0", 1, turns=[turn], episode_return=reward),
                              ("simulator",))
    assert "simulator_generations" not in info  # reported once, through the generic key
    assert gens == env.episode_generations  # and read back from it with nothing lost
    assert [r.completion_ids for r in rows] == [g.completion_ids for g in gens]
    # broken contracts end the episode; a row is invalid only when its text is empty (the released rule)
    assert all(r.role == "simulator" and r.invalid == (not g.completion_text.strip()) and r.ret == 0.0
               for r, g in zip(rows, gens))


def test_same_seed_same_simulation(tiny_env: gymnasium.Env) -> None:
    texts = []
    for _ in range(2):
        tiny_env.reset(seed=5, options={"task_id": "w0-t1"})
        *_, info = tiny_env.step(tiny_env.unwrapped.oracle()[0])
        texts.append(simulator_generations(info)[0].completion_text)
    assert texts[0] == texts[1]


def test_tiny_simulator_answers_an_unknown_tool_and_is_scored_on_it() -> None:
    env = gymnasium.make("EnvACE-Rehearsal-v0", world_model="tiny", base_env_kwargs={"seed": 0, "num_tools": 5, "distractors": 0},
                         sampling={"max_new_tokens": 48}, max_prompt_chars=3000, variant="validation")
    env.reset(seed=2, options={"task_id": "w0-t0"})
    *_, info = env.step('<tool_call>{"name": "launch_rocket", "arguments": {"x": 1}}</tool_call>')
    [gen] = simulator_generations(info)
    assert gen.tool_name == "launch_rocket" and gen.expected_error == "TOOL_NOT_AVAILABLE"
    assert gen.contract_valid  # structured decoding: the tiny model's answer is well-formed
    assert gen.validation_reward in (0.0, 0.5, 1.0) and gen.trainable


def test_fidelity_of_the_tiny_model_reports_teacher_forced_columns() -> None:
    from agentgym_suite.methods.envace.fidelity import ALL, run_fidelity

    report = run_fidelity("SyntheticTools-v0", "tiny", episodes=1,
                          base_env_kwargs={"seed": 0, "num_tools": 5, "distractors": 0, "task_length": 1},
                          sampling={"max_new_tokens": 40}, max_prompt_chars=3000)
    overall = report.per_tool[ALL]
    assert overall["calls"] >= 1 and overall["tf_format_valid"] == 1.0
    assert 0.0 <= overall["tf_key_agreement"] <= 1.0 and overall["tf_exact_agreement"] <= overall["tf_key_agreement"]
    assert overall["success_check_agreement"] in (0.0, 1.0)

"""RolloutEngine: batching, groups, token records, chat-mode masks, failure isolation."""

from __future__ import annotations

import gymnasium as gym
import pytest

from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.seeding import episode_seed

from .fakes import ECHO_TOOL, CounterEnv, EchoToolEnv, ScriptedBackend

GREEDY = SamplingParams(temperature=0, max_new_tokens=6)
TOOL_CALL = '<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>'


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


def _specs(task_ids, group_size=1):
    return [EpisodeSpec(t, 10 + g, f"g{g}", f"{g}.{k}", attempt=k) for g, t in enumerate(task_ids) for k in range(group_size)]


def test_single_mode_batches_turns_and_drops_finished_envs(tiny):
    backend = ScriptedBackend(tiny, ["next"])
    specs = _specs(["c1", "c2", "c3"], group_size=2)
    engine = RolloutEngine(backend, mode="single", sampling=GREEDY, max_turns=10)
    trajectories = engine.run([CounterEnv() for _ in specs], specs)
    assert backend.batch_sizes == [6, 4, 2]
    assert [t.num_turns for t in trajectories] == [1, 1, 2, 2, 3, 3]
    assert all(t.won and t.terminated and t.episode_return == 1.0 and t.error is None for t in trajectories)
    assert trajectories[0].group_id == trajectories[1].group_id and trajectories[0].seed == trajectories[1].seed
    assert trajectories[2].task_id == "c2" and trajectories[2].turns[1].observation == "0 steps to go."
    second = trajectories[4].turns[1].prompt_text
    assert "[Observation 1: 'Counter c3 starts.', Action 1: 'next']" in second and "'wait'" in second


def test_single_mode_token_ids_redecode_to_text(tiny):
    specs = _specs(["c2", "c3"])
    engine = RolloutEngine(tiny, mode="single", sampling=GREEDY, max_turns=2)
    trajectories = engine.run([CounterEnv() for _ in specs], specs)
    assert all(t.num_turns == 2 for t in trajectories)
    for turn in (turn for t in trajectories for turn in t.turns):
        assert tiny.decode(turn.completion_ids) == turn.completion_text
        assert tiny.encode(turn.prompt_text) == turn.prompt_ids
        assert len(turn.logprobs) == len(turn.completion_ids)
    assert trajectories[1].truncated and trajectories[1].turns[-1].truncated  # turn budget ran out
    assert engine.stats.generate_calls == 2 and engine.stats.completion_tokens > 0


def test_chat_mode_random_model_mask_and_spans(tiny):
    specs = _specs(["c3", "c2"])
    engine = RolloutEngine(tiny, mode="chat", sampling=GREEDY, max_turns=3)
    trajectories = engine.run([CounterEnv() for _ in specs], specs)
    for traj in trajectories:
        assert len(traj.token_ids) == len(traj.token_mask) == len(traj.token_logprobs)
        assert len(traj.turn_spans) == traj.num_turns
        model_positions = {i for s, e in traj.turn_spans for i in range(s, e)}
        assert {i for i, m in enumerate(traj.token_mask) if m} == model_positions
        assert traj.token_mask[: traj.prompt_length] == [0] * traj.prompt_length
        cursor = 0
        for turn, (start, end) in zip(traj.turns, traj.turn_spans):
            assert traj.token_ids[cursor:start] == turn.prompt_ids  # env tokens before this turn
            assert traj.token_ids[start:end] == turn.completion_ids
            assert tiny.decode(traj.token_ids[start:end]) == turn.completion_text
            assert traj.token_logprobs[start:end] == turn.logprobs
            cursor = end
        # the random model never ends its turn: the env closes it, then adds the observation
        expected = f"<|im_end|>\n<|im_start|>user\n{traj.turns[0].observation}<|im_end|>\n<|im_start|>assistant\n"
        assert tiny.decode(traj.turns[1].prompt_ids, skip_special_tokens=False) == expected


def test_chat_mode_tool_env_tokens_match_the_full_rendering(tiny):
    backend = ScriptedBackend(tiny, ["Let me think.", TOOL_CALL, "Done."])
    env = EchoToolEnv()
    engine = RolloutEngine(backend, mode="chat", sampling=GREEDY, max_turns=5)
    (traj,) = engine.run([env], [EpisodeSpec("echo-1", 0, "g")])
    assert traj.error is None and traj.terminated and traj.won and traj.num_turns == 3
    messages, answers = [], iter(turn.completion_text for turn in traj.turns)
    for message in env.unwrapped.messages:  # the env's log with each assistant turn as the raw model text
        messages.append({"role": "assistant", "content": next(answers)} if message["role"] == "assistant" else message)
    expected = tiny.render_prompt(messages, [ECHO_TOOL], add_generation_prompt=False)
    assert tiny.decode(traj.token_ids, skip_special_tokens=False) + "\n" == expected
    env_text = tiny.decode(traj.turns[2].prompt_ids, skip_special_tokens=False)
    assert env_text.startswith("\n<|im_start|>user\n<tool_response>") and env_text.endswith("<|im_start|>assistant\n")
    assert sum(traj.token_mask) == sum(len(t.completion_ids) for t in traj.turns)


def test_failing_env_and_failing_generation_only_end_their_own_trajectory(tiny):
    backend = ScriptedBackend(tiny, ["next"], poison="Counter c2")
    specs = _specs(["boom", "c2", "c3"])
    engine = RolloutEngine(backend, mode="single", sampling=GREEDY, max_turns=5)
    boom, poisoned, healthy = engine.run([CounterEnv() for _ in specs], specs)
    assert boom.error_stage == "step" and boom.error.startswith("RuntimeError: the simulator crashed")
    assert poisoned.error_stage == "generate" and poisoned.error.startswith("BackendError: poisoned prompt")
    assert boom.broken and poisoned.broken and len(boom.turns) == 1  # the action whose step raised is kept
    assert healthy.error is None and healthy.won and healthy.num_turns == 3


def test_run_groups_makes_envs_by_id_and_shares_task_and_seed(tiny):
    if "CounterFake-v0" not in gym.registry:
        gym.register("CounterFake-v0", entry_point=CounterEnv)
    backend = ScriptedBackend(tiny, ["next"])
    engine = RolloutEngine(backend, mode="single", sampling=GREEDY, max_turns=4)
    trajectories = engine.run_groups("CounterFake-v0", ["c1", "c2"], group_size=3, seed=5)
    assert [t.task_id for t in trajectories] == ["c1"] * 3 + ["c2"] * 3
    assert {t.seed for t in trajectories[:3]} == {episode_seed(5, "c1", 0)}
    assert {t.seed for t in trajectories[3:]} == {episode_seed(5, "c2", 1)}
    assert len({t.group_id for t in trajectories}) == 2 and len({t.traj_id for t in trajectories}) == 6
    assert all(t.env_id == "CounterFake-v0" for t in trajectories)
    engine.close()


def test_engine_rejects_bad_settings(tiny):
    with pytest.raises(ValueError, match="group_size"):
        RolloutEngine(tiny, sampling=SamplingParams(n=2))
    with pytest.raises(ValueError, match="mode"):
        RolloutEngine(tiny, mode="tree")
    with pytest.raises(ValueError, match="one env per spec"):
        RolloutEngine(tiny).run([CounterEnv()], [])


def test_sampled_episodes_do_not_depend_on_their_batch(tiny):
    # each prompt samples from a seed of its episode and turn (turn_sampling_seed), so playing the
    # episodes together or split into other batches gives the same tokens; a group's members differ
    sampling = SamplingParams(temperature=1.0, max_new_tokens=6, seed=3)
    specs = _specs(["c3", "c2"], group_size=2)
    engine = RolloutEngine(tiny, mode="single", sampling=sampling, max_turns=2)
    together = engine.run([CounterEnv() for _ in specs], specs)
    apart = [t for part in (specs[:1], specs[1:3], specs[3:])
             for t in engine.run([CounterEnv() for _ in part], list(part))]
    ids = [[turn.completion_ids for turn in t.turns] for t in together]
    assert ids == [[turn.completion_ids for turn in t.turns] for t in apart]
    assert ids[0] != ids[1]  # two members of one group: same task and reset seed, different samples

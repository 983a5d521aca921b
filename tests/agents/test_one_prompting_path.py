"""One model-prompting path: training's BackendPolicy and evaluation's ModelAgent, given the same
backend, episode and observations, send the same prompt token ids with the same sampling seeds
and read back the same actions (rollout.model_turns holds the logic both use)."""

from __future__ import annotations

import json
from typing import Any, Sequence

import pytest

from agentgym_suite.agents.model_agent import ModelAgent
from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.llm.base import Sample
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from agentgym_suite.rollout.model_turns import parse_action, turn_sampling_seed
from rollout.fakes import CounterEnv, EchoToolEnv, ScriptedBackend

MAX_NEW_TOKENS = 6
RUN_SEED = 3


class Recording:
    """A token backend that records, per call, the token ids of every prompt and their sampling seeds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[list[list[int]], tuple[int, ...] | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate_from_ids(self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams) -> list[list[Sample]]:
        self.calls.append(([list(p) for p in prompt_ids], params.seeds))
        return self.inner.generate_from_ids(prompt_ids, params)

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        tools = tools or [None] * len(prompts)
        return self.generate_from_ids([self.encode(self.render_prompt(p, t)) for p, t in zip(prompts, tools)], params)


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


def _play(policy: Any, env: Any, spec: EpisodeSpec, **settings: Any):
    return RolloutEngine(policy, max_turns=3, info_keys=None, **settings).run([env], [spec])[0]


@pytest.mark.parametrize(("make_env", "task", "mode"), [(CounterEnv, "c3", "single"), (EchoToolEnv, "echo-1", "single")])
def test_backend_policy_and_model_agent_send_the_same_prompts_and_read_the_same_actions(tiny, make_env, task, mode):
    spec = EpisodeSpec(task, seed=11, group_id=task)  # an evaluation's episode: its own reset seed, attempt 0
    trainer_side = Recording(tiny)
    played = _play(trainer_side, make_env(), spec, mode=mode,
                   sampling=SamplingParams(temperature=1.0, max_new_tokens=MAX_NEW_TOKENS, seed=RUN_SEED))
    eval_side = Recording(tiny)
    agent = ModelAgent(eval_side, prompt_format=mode, temperature=1.0, max_new_tokens=MAX_NEW_TOKENS, seed=RUN_SEED)
    acted = _play(agent, make_env(), spec)

    assert played.error is None and acted.error is None and played.num_turns >= 2
    assert trainer_side.calls == eval_side.calls  # same token ids, same per-episode sampling seeds, turn by turn
    assert [seeds for _, seeds in trainer_side.calls] == [(turn_sampling_seed(RUN_SEED, 11, t),)
                                                          for t in range(played.num_turns)]
    assert [t.completion_text for t in played.turns] == [t.completion_text for t in acted.turns]
    assert [t.observation for t in played.turns] == [t.observation for t in acted.turns]


def test_chat_mode_sends_the_same_conversation(tiny):
    # in chat mode the trainer extends the episode's token ids with the model's own completion tokens
    # while the agent renders the conversation again; for completions that tokenise back to the same
    # ids (here: scripted ones) the two prompts are the same tokens, and always the same text
    script = ['<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>', "Done."]
    spec = EpisodeSpec("echo-1", seed=11, group_id="echo-1")
    trainer_side = Recording(ScriptedBackend(tiny, script))
    played = _play(trainer_side, EchoToolEnv(), spec, mode="chat", sampling=SamplingParams(temperature=0.0, seed=RUN_SEED))
    eval_side = Recording(ScriptedBackend(tiny, script))
    acted = _play(ModelAgent(eval_side, prompt_format="chat", temperature=0.0, seed=RUN_SEED), EchoToolEnv(), spec)
    assert played.num_turns >= 2 and played.won and acted.won
    assert trainer_side.calls == eval_side.calls
    assert [t.completion_text for t in played.turns] == [t.completion_text for t in acted.turns]


class ToolCallServer:
    """A server-like backend (no token ids) that answers every prompt with a ``tool_calls`` message."""

    name = "server"
    supports_token_prompts = False
    CALL = {"id": "call_7", "type": "function", "function": {"name": "echo", "arguments": json.dumps({"text": "hi"})}}

    def __init__(self) -> None:
        self.prompts: list[list[dict[str, Any]]] = []

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        self.prompts.extend(prompts)
        message = {"role": "assistant", "content": None, "tool_calls": [self.CALL]}
        return [[Sample(text="", has_token_ids=False, message=message)] for _ in prompts]


def test_a_servers_tool_calls_are_read_the_same_way_on_both_sides():
    spec = EpisodeSpec("echo-1", seed=5, group_id="echo-1")
    trainer_side, eval_side = ToolCallServer(), ToolCallServer()
    played = _play(trainer_side, EchoToolEnv(), spec, mode="chat", sampling=SamplingParams(temperature=0.0))
    acted = _play(ModelAgent(eval_side, prompt_format="chat", temperature=0.0), EchoToolEnv(), spec)
    action, reply = parse_action(Sample(text="", message={"tool_calls": [ToolCallServer.CALL]}))
    assert json.loads(action)["tool_calls"][0]["id"] == "call_7" and reply is not None
    assert played.turns[0].completion_text == acted.turns[0].completion_text == action
    assert played.turns[0].info.get("tool_calls") == acted.turns[0].info.get("tool_calls")
    assert trainer_side.prompts == eval_side.prompts  # the history keeps the server's tool_calls on both sides
    assert any(m.get("tool_calls") for m in trainer_side.prompts[-1])

"""ModelAgent with the tiny model: command envs, tool envs, batched acting, real envs."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.agents.base import Agent
from agentgym_suite.agents.model_agent import ModelAgent
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.llm import load_backend
from agentgym_suite.llm.base import Sample


class _Steps(TextEnv):
    """Ends after three valid actions."""

    default_action_format = "think_action"

    def task_ids(self) -> list[str]:
        return ["a", "b"]

    def oracle(self) -> list[str]:
        return [self.format_action("go")]

    def _load_task(self, task_id: str) -> TaskStart:
        return TaskStart(f"Start of {task_id}.", "Walk three times.", ["go", "stay"])

    def _execute(self, command: str, parsed: Any) -> StepOutcome:
        done = self.turn >= 3
        return StepOutcome(f"You did {command}.", float(done), float(done), won=done, terminated=done)


class _Tools(ToolEnv):
    """One ``add`` tool; the conversation ends after the first plain reply."""

    def task_ids(self) -> list[str]:
        return ["sum"]

    def oracle(self) -> list[str]:
        return ['<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>']

    def _start_conversation(self, task_id: str) -> Conversation:
        tool = {"type": "function", "function": {"name": "add", "parameters": {
            "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}
        return Conversation("Add 1 and 2.", [tool], {"add": lambda a, b: a + b}, "You add numbers.", "What is 1 + 2?")

    def _evaluate(self) -> tuple[float, bool]:
        return 1.0, any(r.result == 3 for r in self.tool_log)


class _Canned:
    """A backend that records what it was sent and answers with fixed texts."""

    supports_token_prompts = False
    name = "canned"

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.calls: list[tuple[list, list]] = []

    def generate(self, prompts, params, tools=None):
        self.calls.append((list(prompts), list(tools or [])))
        text = self.answers[min(len(self.calls) - 1, len(self.answers) - 1)]
        return [[Sample(text=text, has_token_ids=False)] for _ in prompts]


@pytest.fixture(scope="module")
def tiny():
    return load_backend("tiny", device="cpu")


def _play(env: gym.Env, agent: ModelAgent, max_turns: int, task_id: str | None = None) -> list[str]:
    observation, info = env.reset(seed=0, options={"task_id": task_id} if task_id else None)
    agent.reset(env, seed=0)
    actions = []
    for _ in range(max_turns):
        action = agent.act(observation, info)
        actions.append(action)
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return actions


def test_tiny_model_plays_a_fake_env_end_to_end(tiny):
    agent = ModelAgent(tiny, temperature=0, max_new_tokens=8)
    assert isinstance(agent, Agent)
    actions = _play(_Steps(), agent, max_turns=4)
    assert len(actions) == 4 and all(isinstance(a, str) for a in actions)
    report = agent.last_turn
    assert report["completion_tokens"] == len(report["sample"].completion_ids) > 0
    assert "Walk three times." in report["prompt"] and "<action>" in report["prompt"]


def test_single_prompt_carries_history_and_chat_keeps_whole_conversation():
    backend = _Canned(["<think>ok</think><action>go</action>"])
    single = ModelAgent(backend, prompt_format="single")
    _play(_Steps(), single, max_turns=3)
    last_prompt = backend.calls[-1][0][0]
    # the history shows the projected action, as verl-agent's, not the completion with its reasoning
    assert len(last_prompt) == 1 and "Action 2: 'go'" in last_prompt[0]["content"]
    assert "<think>ok</think>" not in last_prompt[0]["content"]
    assert single.last_turn["thinking"] == "ok"
    backend.calls.clear()
    chat = ModelAgent(backend, prompt_format="chat")
    _play(_Steps(), chat, max_turns=3)
    roles = [m["role"] for m in backend.calls[-1][0][0]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]


def test_tool_env_gets_messages_and_tools_and_raw_text_is_the_action():
    call = '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
    backend = _Canned([call, "It is 3."])
    env = _Tools()
    agent = ModelAgent(backend)  # "single" is overridden for tool envs
    _play(env, agent, max_turns=4)
    first_prompt, first_tools = backend.calls[0][0][0], backend.calls[0][1][0]
    assert first_prompt[0] == {"role": "system", "content": "You add numbers."}
    assert first_tools[0]["function"]["name"] == "add"
    second = backend.calls[1][0][0]
    assert second[-2] == {"role": "assistant", "content": call}
    assert second[-1]["role"] == "tool" and second[-1]["content"] == "3"
    assert env.unwrapped.tool_log[0].result == 3


def test_act_batch_serves_several_envs_in_one_call(tiny):
    envs = [_Steps(), _Steps(), _Tools()]
    agent = ModelAgent(tiny, temperature=0, max_new_tokens=6)
    firsts = [env.reset(seed=0) for env in envs]
    agent.reset_batch(envs, seed=0)
    actions = agent.act_batch([o for o, _ in firsts], [i for _, i in firsts])
    assert len(actions) == 3 and len(agent.last_turns) == 3
    steps = [env.step(a) for env, a in zip(envs, actions)]
    again = agent.act_batch([s[0] for s in steps], [s[4] for s in steps])
    assert len(again) == 3
    with pytest.raises(ValueError, match="reset_batch"):
        agent.act_batch(["x"], [{}])
    with pytest.raises(ValueError, match="act_batch"):
        agent.act("x", {})


@pytest.mark.parametrize("env_id", ["TextWorld-v0", pytest.param("ALFWorld-v0", marks=pytest.mark.slow)])
def test_tiny_model_runs_real_env_episodes(tiny, env_id):
    if env_id not in gym.registry:
        pytest.skip(f"{env_id} is not registered in this install yet")
    from agentgym_suite.registration import entry, missing_requirements

    missing = missing_requirements(entry(env_id))
    if missing:
        pytest.skip(f"{env_id} cannot run here: missing {', '.join(missing)}")
    env = gym.make(env_id)
    agent = ModelAgent(tiny, temperature=0, max_new_tokens=8)
    actions = _play(env, agent, max_turns=3)
    assert len(actions) == 3
    assert "Your task is:" in agent.last_turn["prompt"] or "observation" in agent.last_turn["prompt"]
    env.close()

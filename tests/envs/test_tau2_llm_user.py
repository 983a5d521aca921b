"""Tau2-v0 with the LLM user on a real model (the tiny random one): prompt, labels and the end tokens.

τ²-bench's user protocol (tau2.user.user_simulator.UserSimulator and
tau2.orchestrator.orchestrator.Orchestrator.step): the user model's system prompt is the
simulation guidelines plus the scenario in ``<scenario>`` tags; the conversation opens with the
agent greeting "Hi! How can I help you today?"; a user message holding ``###STOP###``,
``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the run as USER_STOP and it is then scored;
a user message that fails validation (empty) ends it as USER_ERROR with reward 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentgym_suite.core.data import has_benchmark_data
from agentgym_suite.envs.shared.chat_models import BackendChat, shared_backend
from agentgym_suite.envs.tau2 import LLMUser, Tau2Env
from agentgym_suite.envs.tau2.data import load_domain
from agentgym_suite.envs.tau2.users import AGENT_GREETING, END_TOKENS, OUT_OF_SCOPE, STOP, TRANSFER

pytestmark = pytest.mark.skipif(not has_benchmark_data("tau2", "domains"), reason="tau2 data not found; set AGENTGYM_DATA")

SAMPLING = {"temperature": 1.0, "max_new_tokens": 12, "seed": 7}
UPDATE = '<tool_call>{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}</tool_call>'
TRANSFER_CALL = '<tool_call>{"name": "transfer_to_human_agents", "arguments": {"summary": "cannot do it"}}</tool_call>'


class Suffixed:
    """The tiny model's real generations with a fixed text appended (to make it speak an end token)."""

    def __init__(self, backend: Any, suffix: str) -> None:
        self.backend, self.suffix, self.name = backend, suffix, "tiny+suffix"

    def generate(self, prompts: list, params: Any, tools: Any = None) -> list:
        rows = self.backend.generate(prompts, params, tools)
        return [[dataclasses.replace(s, text=s.text + self.suffix) for s in row] for row in rows]


def test_tiny_model_plays_the_customer_with_the_tau2_prompt() -> None:
    # seed 8: a seed whose random-model reply is not blank (the reply itself is noise)
    env = Tau2Env(domain="mock", user="llm:tiny", user_sampling={**SAMPLING, "seed": 8})
    env.user.generate.keep_prompts = True
    obs, info = env.reset(options={"task_id": "update_task_1"})
    assert info["user_simulator"] == "llm:tiny" and obs.strip()
    first = env.user.generate.prompts[0]
    guidelines = load_domain("mock").guidelines_tools  # the mock customer has tools, so upstream picks these
    assert first[0]["role"] == "system" and first[0]["content"].startswith(guidelines.strip()[:200])
    assert "<scenario>" in first[0]["content"] and "Instructions:" in first[0]["content"]
    assert all(token in first[0]["content"] for token in END_TOKENS)
    assert first[1] == {"role": "user", "content": AGENT_GREETING}
    obs2, _, done, _, info = env.step("How can I help with your task?")
    flipped = env.user.generate.prompts[1]
    assert flipped[-2] == {"role": "assistant", "content": obs, "tool_calls": None}
    assert flipped[-1] == {"role": "user", "content": "How can I help with your task?"}
    assert info["user_simulator"] == "llm:tiny" and (done or obs2.strip())


@pytest.mark.parametrize("task_id,actions,token,reward", [
    ("update_task_1", [UPDATE], STOP, 1.0),  # goal met, the customer stops: scored normally
    ("impossible_task_1", [TRANSFER_CALL], TRANSFER, 1.0),  # handed to a human: the transfer is the expected action
    ("update_task_1", [], OUT_OF_SCOPE, 0.0),  # the scenario ran out: scored on what was done (nothing)
])
def test_end_tokens_from_the_model_end_the_conversation(task_id: str, actions: list[str], token: str, reward: float) -> None:
    data = load_domain("mock")
    backend = Suffixed(shared_backend("tiny"), "")
    env = Tau2Env(domain="mock", user=LLMUser(BackendChat(backend=backend, **SAMPLING), data.guidelines, label="llm:tiny+suffix"))
    env.reset(options={"task_id": task_id})
    for action in actions:
        _, _, done, _, _ = env.step(action)
        assert not done
    backend.suffix = f" {token}"
    _, got, done, _, info = env.step("Is there anything else?")
    assert done and info["tau2_end"] == token and info["scorable"] and got == reward
    assert info["messages"][-1]["role"] == "user" and info["messages"][-1]["content"].endswith(token)


def test_an_empty_model_reply_is_a_user_error() -> None:
    env = Tau2Env(domain="mock", user="llm:tiny", user_sampling={"temperature": 0.0, "max_new_tokens": 8})
    obs, _ = env.reset(options={"task_id": "update_task_1"})  # greedy decoding of the random model gives only blank lines
    assert obs == ""
    _, reward, done, _, info = env.step(UPDATE)
    assert done and reward == 0.0 and info["tau2_end"] == "user_error" and "empty" in info["user_error"]

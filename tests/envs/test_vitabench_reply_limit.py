"""VitaBench's reply limit follows a declared token budget: upstream reads an agent reply of any length
(its requests carry no token cap), so a long reply must not be refused at the 8,192 characters of an
env without a budget."""

from __future__ import annotations

import pytest

from agentgym_suite.core.spaces import CHARS_PER_TOKEN_BOUND, MAX_ACTION_CHARS
from agentgym_suite.envs.vitabench import VitaBenchEnv


def _env() -> VitaBenchEnv:
    try:
        return VitaBenchEnv(domain="delivery")
    except Exception as exc:  # noqa: BLE001 - the benchmark's data is not on this machine
        pytest.skip(f"VitaBench data not available: {exc}")


def test_the_reply_limit_is_the_declared_budgets_worth_of_characters() -> None:
    env = _env()
    budget = VitaBenchEnv.eval_sampling_defaults["max_new_tokens"]
    assert env.max_reply_chars == budget * CHARS_PER_TOKEN_BOUND > MAX_ACTION_CHARS
    assert env.action_space.max_length == env.max_reply_chars


def test_a_long_reply_is_read_as_the_agents_message() -> None:
    env = _env()
    env.reset(options={"task_id": "10711001"})
    reply = "Which restaurant would you like? " + "Let me think about the options. " * 600
    assert MAX_ACTION_CHARS < len(reply) < env.max_reply_chars
    obs, _, terminated, _, info = env.step(reply)
    assert info["action_valid"] and not terminated and "confirm" in obs.lower()

"""Hostile actions that once broke an env: one regression test per hole.

Every test sends the hostile action, checks that the env answered with an invalid action and an
observation that says why (never an exception), and then plays the env's oracle from the state
it is in: the task must still be won.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest

from reliability.registered import (
    TOOL_ENV_IDS,
    cheap_kwargs,
    env_params,
    finish_with_oracle,
    made_envs,
    skip_unless_usable,
)

TOOL_ENVS = env_params(TOOL_ENV_IDS)
DIGITS = sys.get_int_max_str_digits()
STEP_LIMIT = 100
"""Gymnasium's step limit in these tests: a refused action counts as a step, and an env registered
with a short limit must not be truncated by the hostile actions before its oracle plays."""


@pytest.fixture(scope="module")
def make(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], gym.Env]]:
    """One env per id for the module, made with cheap kwargs and a private cache folder."""
    with made_envs(tmp_path_factory, STEP_LIMIT) as get:
        yield get


def _first_tool(info: dict[str, Any]) -> str:
    tool = info["tools"][0]
    return str(tool.get("function", tool)["name"])


def _step_invalid(env: gym.Env, action: Any) -> tuple[str, dict[str, Any]]:
    """Step ``action`` and check it was refused without ending the episode."""
    observation, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False, (repr(action)[:200], observation[:300])
    assert (reward, terminated, truncated) == (0.0, False, False), observation[:300]
    return observation, info


# ---------------------------------------------------------------------------- numbers over the conversion limit
def _huge_number_actions(name: str) -> dict[str, str]:
    """One call whose argument is an integer of more digits than Python converts, in each message shape."""
    args_text = '{"n": ' + "8" * (DIGITS + 700) + "}"
    return {
        "tool_call block": f'<tool_call>{{"name": "{name}", "arguments": {args_text}}}</tool_call>',
        "JSON-string arguments": "<tool_call>" + json.dumps({"name": name, "arguments": args_text}) + "</tool_call>",
        "OpenAI tool_calls": json.dumps({"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": args_text}}]}),
    }


def numbers_over_the_conversion_limit_are_invalid(env: gym.Env) -> None:
    """Each message shape with an integer over Python's conversion limit is refused, saying why; the
    oracle still wins afterwards."""
    _, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids()[0]})
    for shape, action in _huge_number_actions(_first_tool(info)).items():
        observation, _ = _step_invalid(env, action)
        assert f"more than {DIGITS} digits" in observation, (shape, observation[:300])
    assert finish_with_oracle(env)["won"]


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_numbers_over_the_conversion_limit_are_invalid_actions(env_id: str, make: Callable[[str], gym.Env]) -> None:
    """A 5,000-digit integer in tool-call arguments made step() raise ValueError in every tool env."""
    numbers_over_the_conversion_limit_are_invalid(make(env_id))


def test_rehearsal_ends_the_episode_on_a_refused_number_by_design(make: Callable[[str], gym.Env], tmp_path: Any) -> None:
    """With EnvACE's rule (``end_on_tool_error``, the default) the refused call ends the episode at 0."""
    skip_unless_usable("EnvACE-Rehearsal-v0")
    env = gym.make("EnvACE-Rehearsal-v0", **cheap_kwargs("EnvACE-Rehearsal-v0", tmp_path))
    _, info = env.reset(seed=0)
    for action in _huge_number_actions(_first_tool(info)).values():
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(action)
        # the released variant (default) marks only empty text invalid: a malformed call ends the episode instead
        assert (reward, terminated, info["won"], info["action_valid"]) == (0.0, True, False, True)
        assert "end_on_tool_error" in info["error"]
    env.close()


# ---------------------------------------------------------------------------- text without a visible character
NO_VISIBLE_TEXT = ["\x00", "\x00" * 64, "\x00\n\x00 \x00", "\x1b\x07\x08\x7f", "\u200b\ufeff\u200d",
                   '{"content": "", "tool_calls": []}', '{"content": "\\u0000\\u001b", "tool_calls": []}']


def text_without_a_visible_character_is_refused(env: gym.Env) -> None:
    """Messages without a visible character are refused and leave the conversation as it was; the
    oracle still wins afterwards."""
    env.reset(seed=0, options={"task_id": env.unwrapped.task_ids()[0]})
    before = list(env.unwrapped.messages)
    for action in NO_VISIBLE_TEXT:
        observation, info = _step_invalid(env, action)
        assert observation.startswith("Invalid action") and info["invalid_reason"]
        assert env.unwrapped.messages == before, "a refused message must leave the conversation as it was"
    assert finish_with_oracle(env)["won"]


# ---------------------------------------------------------------------------- BFCL prompting literals
NOT_JSON_LITERALS = {"bytes": "b'x'", "a complex number": "1j"}
"""Values bfcl-eval's decoder reads but JSON cannot carry (a set it does not read: the whole reply
is then the model's words, as bfcl-eval takes it). A dict with a tuple key is not among them in a
multi-turn entry: bfcl-eval's executor runs that call and answers with the tool's error, and so
does the env (``test_a_tuple_dict_key_is_run_as_bfcl_evals_executor_runs_it``)."""


@pytest.mark.parametrize("literal", list(NOT_JSON_LITERALS.values()), ids=list(NOT_JSON_LITERALS))
def test_bfcl_prompting_literals_json_cannot_carry_are_invalid_actions(literal: str) -> None:
    """``[cd(folder={1,2})]`` in BFCL's prompting style raised TypeError from env.step (the decoded
    call was dumped as JSON). Now the call is refused with a reason and the episode goes on."""
    skip_unless_usable("BFCL-v0")
    env = gym.make("BFCL-v0", category="base", system_prompt="prompting", max_episode_steps=STEP_LIMIT)
    env.reset(seed=0, options={"task_id": "multi_turn_base_0"})
    observation, info = _step_invalid(env, f"[cd(folder={literal}), ls()]")
    assert "error_tool_call" in observation and "cd:" in observation, observation
    assert info["messages"][-1]["role"] == "tool" and json.dumps(info["messages"])
    assert finish_with_oracle(env)["won"]
    env.close()


def test_a_tuple_dict_key_is_run_as_bfcl_evals_executor_runs_it() -> None:
    """``[cd(folder={(1, 2): 3}), ls()]``: bfcl-eval's multi-turn executor runs both calls, ``cd`` failing
    in the tool's own words; the env answers both, raises nothing and the episode goes on."""
    skip_unless_usable("BFCL-v0")
    env = gym.make("BFCL-v0", category="base", system_prompt="prompting", max_episode_steps=STEP_LIMIT)
    env.reset(seed=0, options={"task_id": "multi_turn_base_0"})
    observation, reward, terminated, truncated, info = env.step("[cd(folder={(1, 2): 3}), ls()]")
    assert info["action_valid"] is True and (reward, terminated, truncated) == (0.0, False, False)
    assert "Error during execution" in observation and '"name": "ls"' in observation, observation
    assert json.dumps(info["messages"])
    assert finish_with_oracle(env)["won"]
    env.close()


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_text_without_a_visible_character_is_not_a_reply(env_id: str, make: Callable[[str], gym.Env]) -> None:
    """A message of NUL characters only was taken as a text reply: it ended SyntheticTools and the
    rehearsal env, closed BFCL's user turn and got an answer from tau2's user."""
    text_without_a_visible_character_is_refused(make(env_id))

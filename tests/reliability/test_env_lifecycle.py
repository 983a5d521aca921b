"""Every registered env around its episodes: ``reset`` options, ``copy.deepcopy`` and calls after ``close()``.

Holes found by hand, each now checked over every registered id (a new env is covered with no edit
here): ``options="task_id=1"`` raised ``TypeError: string indices must be integers`` from inside the
env, a mistyped key (``{"taskid": 3}``) was ignored and a random task played; ``step``/``reset``
after ``close()`` returned normally (ScienceWorld would start a new JVM); ``copy.deepcopy`` raised
whatever the backend raised (a ctypes pointer, an ``RLock``) in some envs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest

from agentgym_suite.core.errors import ClosedEnvError, EnvNotCopyableError, ResetOptionsError
from reliability.registered import env_params, made_envs

STEP_LIMIT = 100
ALL_ENVS = env_params()


@pytest.fixture(scope="module")
def make(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], gym.Env]]:
    """One env per id for the module (made with cheap kwargs, a private cache folder); the test of
    ``close()`` comes last and closes it."""
    with made_envs(tmp_path_factory, STEP_LIMIT) as get:
        yield get


def _play_oracle(env: gym.Env, limit: int = 60) -> list[tuple[str, float, bool]]:
    """Play the oracle to the end; the (observation, reward, won) of every step."""
    seen = []
    for _ in range(limit):
        plan = env.unwrapped.oracle()
        if not plan:
            break
        observation, reward, terminated, truncated, info = env.step(plan[0])
        seen.append((str(observation), float(reward), bool(info.get("won"))))
        if terminated or truncated:
            break
    return seen


@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_reset_options_are_checked(env_id: str, make: Callable[[str], gym.Env]) -> None:
    env = make(env_id)
    first = env.unwrapped.task_ids()[0]
    # a good reset first: Gymnasium's PassiveEnvChecker (gymnasium 1.x) fails the first step with a
    # TypeError when the env's first reset raised, whatever the env (see the report on issue 29)
    env.reset(seed=0, options={"task_id": first})
    with pytest.raises(ResetOptionsError, match="takes a dict") as not_a_dict:
        env.reset(seed=0, options="task_id=1")  # type: ignore[arg-type]
    assert isinstance(not_a_dict.value, TypeError) and "task_id" in str(not_a_dict.value)
    with pytest.raises(ResetOptionsError, match="did you mean 'task_id'") as typo:
        env.reset(seed=0, options={"taskid": first})
    assert isinstance(typo.value, ValueError) and "accepts: task_id" in str(typo.value)
    _, info = env.reset(seed=0, options={"task_id": first})
    assert info["task_id"] == first
    env.reset(seed=0, options=None)  # no options: a drawn task, as before


@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_deepcopy_gives_an_independent_env_or_says_how_to_get_one(env_id: str, make: Callable[[str], gym.Env]) -> None:
    env = make(env_id)
    task = env.unwrapped.task_ids()[0]
    env.reset(seed=0, options={"task_id": task})
    try:
        twin = copy.deepcopy(env)
    except EnvNotCopyableError as exc:
        assert "gymnasium.make" in str(exc) and "make_vec" in str(exc), exc
        return
    try:
        assert twin.unwrapped is not env.unwrapped
        played = _play_oracle(twin)
        assert played and env.unwrapped.turn == 0, "playing the copy moved the original"
        assert _play_oracle(env) == played, "the original plays differently from its copy"
    finally:
        twin.close()
    env.reset(seed=0, options={"task_id": task})  # the copy's close left the original usable


@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_a_closed_env_refuses_step_and_reset(env_id: str, make: Callable[[str], gym.Env]) -> None:
    env = make(env_id)
    env.reset(seed=0, options={"task_id": env.unwrapped.task_ids()[0]})
    action = env.unwrapped.oracle()[0]
    env.close()
    with pytest.raises(ClosedEnvError, match="close"):
        env.step(action)
    with pytest.raises(ClosedEnvError, match="gymnasium.make"):
        env.reset(seed=0)
    env.close()  # closing twice is harmless
    backend: Any = getattr(env.unwrapped, "_process", None)
    if backend is not None:  # ScienceWorld: the refused reset did not start a new JVM
        assert not backend.alive

"""Every registered env, made cheaply for the generic tests: classes, kwargs, skips and oracle replay.

Everything here is read from the env's own declarations (its class's ``fixture_kwargs``,
``fixture_replaces_data`` and ``fixture_profile``, its registration entry), never from a table
of env ids, so an env registered later (with ``register_entry``, even at run time) is tested the
same way with no edit here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.core.fixture_profile import FixtureProfile, fixture_profile, missing_programs
from agentgym_suite.core.tool_env import ToolEnv
from agentgym_suite.registration import implemented, missing_requirements, suite_entries


def env_class(env_id: str) -> Any:
    """The class (or factory) behind a registered id: its ``fixture_kwargs`` and ``fixture_profile`` hooks."""
    entry_point = gym.spec(env_id).entry_point
    return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point


def profile(env_id: str) -> FixtureProfile:
    """The :class:`FixtureProfile` the env declares (the defaults when it declares none)."""
    return fixture_profile(env_class(env_id))


def is_tool_env(env_id: str) -> bool:
    """Whether the env's action is an assistant message with tool calls (a subclass of ``ToolEnv``)."""
    try:
        cls = env_class(env_id)
    except (ImportError, AttributeError, gym.error.Error):  # an env whose package is missing is skipped anyway
        return False
    return isinstance(cls, type) and issubclass(cls, ToolEnv)


TOOL_ENV_IDS = tuple(e.id for e in suite_entries() if is_tool_env(e.id))
"""The registered envs whose action is an assistant message with tool calls, read from the registry
so that a new tool env is tested as one with no edit here."""


def goes_on(env_id: str) -> dict[str, Any]:
    """Kwargs that leave room to play the oracle after hostile actions (``fixture_profile.goes_on_kwargs``)."""
    return dict(profile(env_id).goes_on_kwargs)


def cheap_kwargs(env_id: str, root: Path) -> dict[str, Any]:
    """The env's own ``fixture_kwargs``: kwargs that make it quickly (fixture data written under ``root``)."""
    make = getattr(env_class(env_id), "fixture_kwargs", None)
    return make(root / env_id) if make is not None else {}


def _marks(env_id: str) -> list[Any]:
    """A pytest mark per program the env needs (``java``), so ``-m "not java"`` leaves it out."""
    try:
        programs = profile(env_id).needs_programs
    except (ImportError, AttributeError, gym.error.Error):  # not importable here: skipped when it runs
        return []
    return [getattr(pytest.mark, program) for program in programs]


def env_params(ids: tuple[str, ...] | None = None) -> list[Any]:
    """``pytest.param`` per registered env id (or per id of ``ids``), marked with the programs it needs."""
    chosen = [e.id for e in suite_entries() if ids is None or e.id in ids]
    return [pytest.param(i, marks=_marks(i), id=i) for i in chosen]


def skip_unless_usable(env_id: str) -> None:
    """Skip the calling test when ``env_id`` cannot run here (missing package, data or program, or an
    env made against a running server only); fail it when a suite entry points to no module."""
    item = next((e for e in suite_entries() if e.id == env_id), None)
    if item is not None and not implemented(item):
        pytest.fail(f"{env_id} is listed in registration.py but {item.entry_point} does not exist")
    missing = missing_requirements(item) if item is not None else []
    if missing and not [m for m in missing if m.startswith("package")]:  # only data is missing: the class imports
        if getattr(env_class(env_id), "fixture_replaces_data", False):
            missing = []
    if missing:
        pytest.skip(f"{env_id} is not usable here: {missing}")
    declared = profile(env_id)
    if declared.needs_server:
        pytest.skip(f"{env_id} plays on a running server; tests/serving plays it against `agentgym serve`")
    if missing_programs(declared):
        pytest.skip(f"{env_id} needs {missing_programs(declared)} on PATH")


def finish_with_oracle(env: gym.Env, max_steps: int = 80) -> dict[str, Any]:
    """From the env's current state, take the oracle's next action (asked again each step) until the
    episode ends; return the last info. Fails the calling test when an oracle action is invalid, the
    oracle runs dry or the episode does not end within ``max_steps``."""
    info: dict[str, Any] = {}
    for step in range(max_steps):
        plan = env.unwrapped.oracle()
        assert plan, f"the oracle has no action left after {step} steps"
        _, _, terminated, truncated, info = env.step(plan[0])
        assert info["action_valid"], (plan[0][:300], info.get("invalid_reason"))
        if terminated or truncated:
            return info
    raise AssertionError(f"the oracle did not end the episode within {max_steps} steps")


def winnable_tasks(env: gym.Env, n: int = 3, scan: int = 8) -> list[str]:
    """The first ``n`` of the env's first ``scan`` tasks whose oracle wins a clean replay (seed 0).

    A task the oracle cannot win untouched says nothing about hostile actions: τ² retail tasks with
    natural-language assertions, for one, are not scorable without a judge (won stays False)."""
    env = env.unwrapped
    found: list[str] = []
    for task in list(env.task_ids())[:scan]:
        _, info = env.reset(seed=0, options={"task_id": task})
        for _ in range(80):
            plan = env.oracle()
            if not plan:
                break
            _, _, terminated, truncated, info = env.step(plan[0])
            if terminated or truncated:
                break
        if info.get("won"):
            found.append(task)
        if len(found) == n:
            break
    assert found, "the oracle wins none of the env's first tasks"
    return found


@contextmanager
def made_envs(tmp_path_factory: pytest.TempPathFactory, step_limit: int) -> Iterator[Callable[[str], gym.Env]]:
    """``get(env_id)``: one env per id, made with cheap kwargs, the kwargs that keep it going after
    hostile actions, Gymnasium's ``step_limit`` and a private cache folder; all closed at the end."""
    patch = pytest.MonkeyPatch()
    patch.setenv("AGENTGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    root = tmp_path_factory.mktemp("data")
    made: dict[str, gym.Env] = {}

    def get(env_id: str) -> gym.Env:
        skip_unless_usable(env_id)
        if env_id not in made:
            made[env_id] = gym.make(env_id, max_episode_steps=step_limit, **cheap_kwargs(env_id, root), **goes_on(env_id))
        return made[env_id]

    try:
        yield get
    finally:
        for env in made.values():
            env.close()
        patch.undo()

"""Every registered env, made cheaply for the reliability tests: kwargs, skips and oracle replay."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.core.tool_env import ToolEnv
from agentgym_suite.registration import ENV_ENTRIES, missing_requirements


def _is_tool_env(entry_point: str) -> bool:
    try:
        return issubclass(load_env_creator(entry_point), ToolEnv)
    except (ImportError, AttributeError):  # an env whose package is missing is skipped anyway
        return False


TOOL_ENV_IDS = tuple(e.id for e in ENV_ENTRIES if _is_tool_env(e.entry_point))
"""The registered envs whose action is an assistant message with tool calls (subclasses of
``ToolEnv``), read from the registry so that a new tool env is fuzzed as one with no edit here."""
GOES_ON = {"EnvACE-Rehearsal-v0": {"end_on_tool_error": False}, "SearchQA-v0": {"max_turns": 12}}
"""Kwargs that leave room to play the oracle after hostile actions. EnvACE ends an episode at
the first malformed call by design; SearchQA's budget of 4 turns counts every action, refused
ones included, as Search-R1 counts every response."""


def env_class(env_id: str) -> Any:
    """The class behind a registered id (its ``fixture_kwargs`` and ``fixture_replaces_data`` hooks)."""
    return load_env_creator(next(e for e in ENV_ENTRIES if e.id == env_id).entry_point)


def cheap_kwargs(env_id: str, root: Path) -> dict[str, Any]:
    """The env's own ``fixture_kwargs``: kwargs that make it quickly (fixture data written under ``root``)."""
    return env_class(env_id).fixture_kwargs(root / env_id)


def env_params(ids: tuple[str, ...] | None = None) -> list[Any]:
    """``pytest.param`` per registered env id (or per id of ``ids``), ScienceWorld marked ``java``."""
    chosen = [e.id for e in ENV_ENTRIES if ids is None or e.id in ids]
    return [pytest.param(i, marks=[pytest.mark.java] if i == "ScienceWorld-v0" else [], id=i) for i in chosen]


def _java() -> bool:
    try:
        return subprocess.run(["java", "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def skip_unless_usable(env_id: str) -> None:
    """Skip the calling test when ``env_id`` cannot run here (missing package, data or Java)."""
    item = next(e for e in ENV_ENTRIES if e.id == env_id)
    cls = env_class(env_id)
    fixture_data = getattr(cls, "fixture_replaces_data", False)
    missing = [m for m in missing_requirements(item) if not (fixture_data and m.startswith("data"))]
    if missing:
        pytest.skip(f"{env_id} is not usable here: {missing}")
    if getattr(cls, "needs_server", False):
        pytest.skip(f"{env_id} plays on a running server; tests/serving covers it against `agentgym serve`")
    if env_id == "ScienceWorld-v0" and not _java():
        pytest.skip("needs a Java runtime")


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

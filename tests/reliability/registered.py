"""Every registered env, made cheaply for the reliability tests: kwargs, skips and oracle replay."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.registration import ENV_ENTRIES, missing_requirements

TOOL_ENV_IDS = ("BFCL-v0", "Tau2-v0", "VitaBench-v0", "FinMCP-v0", "SyntheticTools-v0", "EnvACE-Rehearsal-v0")
"""The envs whose action is an assistant message with tool calls."""
GOES_ON = {"EnvACE-Rehearsal-v0": {"end_on_tool_error": False}, "SearchQA-v0": {"max_turns": 12}}
"""Kwargs that leave room to play the oracle after hostile actions. EnvACE ends an episode at
the first malformed call by design; SearchQA's budget of 4 turns counts every action, refused
ones included, as Search-R1 counts every response."""
FIXTURE_DATA = ("WebShop-v0", "FinMCP-v0")
"""Envs whose cheap kwargs point at generated fixtures, so missing benchmark data does not matter."""


def cheap_kwargs(env_id: str, root: Path) -> dict[str, Any]:
    """Kwargs that make ``env_id`` quickly (fixture data written under ``root`` where needed)."""
    if env_id == "WebShop-v0":
        from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

        return {"data_dir": str(write_synthetic_catalogue(root / "webshop"))}
    if env_id == "FinMCP-v0":
        from agentgym_suite.envs.finmcp.fixtures import write_fixtures

        return {"data_path": str(write_fixtures(root / "finmcp"))}
    if env_id == "TextWorld-v0":
        return {"challenge": "tw-coin_collector", "n_games": 2}
    if env_id == "ScienceWorld-v0":
        return {"task": "find-living-thing"}
    if env_id == "EnvACE-Rehearsal-v0":
        return {"world_model": "real"}
    return {}


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
    fixture_data = env_id in FIXTURE_DATA
    missing = [m for m in missing_requirements(item) if not (fixture_data and m.startswith("data"))]
    if missing:
        pytest.skip(f"{env_id} is not usable here: {missing}")
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

"""Every registered id: made by Gymnasium and passing ``check_env`` with warnings as errors.

Ids whose data cannot ship here get small fixtures of their own (WebShop's synthetic
catalogue, FinMCP's generated samples); the rehearsal env runs with the pass-through world
model so it needs no model weights.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.registration import ENV_ENTRIES, entry, implemented, missing_requirements


def _kwargs_for(env_id: str, tmp: Path) -> dict[str, Any]:
    if env_id == "WebShop-v0":
        from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue

        return {"data_dir": write_synthetic_catalogue(tmp / "webshop")}
    if env_id == "FinMCP-v0":
        from agentgym_suite.envs.finmcp.fixtures import write_fixtures

        return {"data_path": str(write_fixtures(tmp / "finmcp"))}
    if env_id == "EnvACE-Rehearsal-v0":
        return {"world_model": "real"}
    if env_id == "ScienceWorld-v0":
        return {"task": 0}
    return {}


NEEDS_ONLY_FIXTURE = {"WebShop-v0", "FinMCP-v0"}


@pytest.mark.parametrize("env_id", [e.id for e in ENV_ENTRIES])
def test_check_env_on_every_registered_id(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    item = entry(env_id)
    if not implemented(item):
        pytest.fail(f"{env_id} is listed in registration.py but {item.entry_point} does not exist")
    missing = [m for m in missing_requirements(item) if not (env_id in NEEDS_ONLY_FIXTURE and m.startswith("data"))]
    if missing:
        pytest.skip(f"{env_id} cannot run here: {missing}")
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = gym.make(env_id, **_kwargs_for(env_id, tmp_path))
    try:
        assert env.spec is not None and env.spec.max_episode_steps == item.max_episode_steps
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_registration_is_idempotent() -> None:
    before = len(gym.registry)
    agentgym_suite.register_all()
    assert len(gym.registry) == before


def test_unknown_id_lists_known_ids() -> None:
    with pytest.raises(KeyError, match="TextWorld-v0"):
        entry("Zork-v9")


ORACLE_SKIP = {"ScienceWorld-v0": "long gold paths; oracle replay is covered in tests/envs/test_scienceworld.py"}


@pytest.mark.parametrize("env_id", [e.id for e in ENV_ENTRIES])
def test_oracle_agent_wins_through_gym_make(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle asked afresh every turn (as OracleAgent does) wins within the registered turn budget."""
    from agentgym_suite.agents import OracleAgent

    if env_id in ORACLE_SKIP:
        pytest.skip(ORACLE_SKIP[env_id])
    item = entry(env_id)
    missing = [m for m in missing_requirements(item) if not (env_id in NEEDS_ONLY_FIXTURE and m.startswith("data"))]
    if missing:
        pytest.skip(f"{env_id} cannot run here: {missing}")
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = gym.make(env_id, **_kwargs_for(env_id, tmp_path))
    agent = OracleAgent()
    try:
        for task_id in env.unwrapped.task_ids()[:2]:
            obs, info = env.reset(options={"task_id": task_id})
            agent.reset(env)
            terminated = truncated = False
            seen = set(info)
            while not (terminated or truncated):
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                seen |= set(info)
            assert info["won"] and terminated and not truncated, (env_id, task_id, info.get("turn"))
            assert not undocumented_keys(seen), f"{env_id} reports info keys core/info.py does not document"
    finally:
        env.close()

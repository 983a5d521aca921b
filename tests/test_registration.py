"""Every registered id: made by Gymnasium and passing ``check_env`` with warnings as errors.

Each env is made with its own ``fixture_kwargs`` (a short task, a few generated games, or
generated data where the real data cannot ship: WebShop's synthetic catalogue, FinMCP's
samples; the rehearsal env answers with the real tools, so it needs no model weights).
Nothing here is chosen per env id, so a newly registered env is checked the same way.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.info import undocumented_keys
from agentgym_suite.registration import ENV_ENTRIES, entry, implemented, missing_requirements, register_entry


def fixture_kwargs(env_id: str, scratch: Path) -> dict[str, Any]:
    """The env's own fixture kwargs; skips when the env cannot run here even with them."""
    item = entry(env_id)
    if not implemented(item):
        pytest.fail(f"{env_id} is listed in registration.py but {item.entry_point} does not exist")
    env_class = load_env_creator(item.entry_point)
    missing = missing_requirements(item)
    if getattr(env_class, "fixture_replaces_data", False):
        missing = [m for m in missing if not m.startswith("data")]
    if missing:
        pytest.skip(f"{env_id} cannot run here: {missing}")
    if getattr(env_class, "needs_server", False):
        pytest.skip(f"{env_id} plays on a running server; tests/serving plays it against `agentgym serve`")
    return env_class.fixture_kwargs(scratch) if hasattr(env_class, "fixture_kwargs") else {}


@pytest.mark.parametrize("env_id", [e.id for e in ENV_ENTRIES])
def test_check_env_on_every_registered_id(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = gym.make(env_id, **fixture_kwargs(env_id, tmp_path))
    try:
        assert env.spec is not None and env.spec.max_episode_steps == entry(env_id).max_episode_steps
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


def test_unknown_id_suggests_the_closest_ids() -> None:
    with pytest.raises(KeyError, match=r"Did you mean 'ALFWorld-v0'"):
        entry("alfworld-v0")


def test_registering_an_id_again_with_other_settings_warns(recwarn: pytest.WarningsRecorder) -> None:
    first = entry("TextWorld-v0")
    register_entry(first)  # the same settings again: silent
    assert not [w for w in recwarn if "already registered" in str(w.message)]
    changed = dataclasses.replace(first, max_episode_steps=first.max_episode_steps + 1)
    with pytest.warns(UserWarning, match="TextWorld-v0 is already registered with other settings"):
        register_entry(changed)
    assert gym.registry["TextWorld-v0"].max_episode_steps == first.max_episode_steps


@pytest.mark.parametrize("env_id", [e.id for e in ENV_ENTRIES])
def test_oracle_agent_wins_through_gym_make(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle asked afresh every turn (as OracleAgent does) wins within the registered turn budget."""
    from agentgym_suite.agents import OracleAgent

    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    env = gym.make(env_id, **fixture_kwargs(env_id, tmp_path))
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


def test_data_requirements_come_from_the_benchmark_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.envs.finmcp.data_source import SOURCE
    from agentgym_suite.registration import data_source

    item = entry("FinMCP-v0")
    assert data_source(item) is SOURCE and data_source(entry("SyntheticTools-v0")) is None
    monkeypatch.setenv("AGENTGYM_DATA", str(tmp_path))
    assert missing_requirements(item) == [f"data {tmp_path / 'finmcp' / '*.json'}"]
    (tmp_path / "finmcp").mkdir()
    (tmp_path / "finmcp" / "samples.json").write_text("[]")
    assert missing_requirements(item) == []

"""Every registered id: made by Gymnasium and passing ``check_env`` with warnings as errors.

Each env is made with its own ``fixture_kwargs`` (a short task, a few generated games, or
generated data where the real data cannot ship: WebShop's synthetic catalogue, FinMCP's
samples; the rehearsal env answers with the real tools, so it needs no model weights).
Nothing here is chosen per env id, so a newly registered env is checked the same way.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentgym_suite  # noqa: F401
from agentgym_suite.core.info import INFO_KEYS, undocumented_keys
from agentgym_suite.registration import entry, missing_requirements, register_entry, suite_entries
from reliability.registered import cheap_kwargs, env_class, env_params, skip_unless_usable


def check_contract(env_id: str, scratch: Path) -> None:
    """Make ``env_id`` with its fixture kwargs and run Gymnasium's ``check_env`` with warnings as errors."""
    skip_unless_usable(env_id)
    env = gym.make(env_id, **cheap_kwargs(env_id, scratch))
    try:
        assert env.spec is not None and env.spec.id == env_id
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def oracle_wins_with_documented_keys(env_id: str, scratch: Path, tasks: int = 2) -> None:
    """The oracle asked afresh every turn (as OracleAgent does) wins the env's first ``tasks`` tasks
    within the registered turn budget, and every info key it meets is documented: in the shared
    contract or declared by the env (``info_keys`` of its classes and of the envs it plays on)."""
    from agentgym_suite.agents import OracleAgent

    skip_unless_usable(env_id)
    env = gym.make(env_id, **cheap_kwargs(env_id, scratch))
    agent = OracleAgent()
    try:
        for task_id in env.unwrapped.task_ids()[:tasks]:
            obs, info = env.reset(options={"task_id": task_id})
            agent.reset(env)
            terminated = truncated = False
            seen = set(info)
            while not (terminated or truncated):
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                seen |= set(info)
            assert info["won"] and terminated and not truncated, (env_id, task_id, info.get("turn"))
            missing = undocumented_keys(seen, env)
            assert not missing, f"{env_id} reports info keys {missing} that neither core/info.py nor its info_keys document"
    finally:
        env.close()


@pytest.mark.parametrize("env_id", env_params())
def test_check_env_on_every_registered_id(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    check_contract(env_id, tmp_path)
    assert gym.spec(env_id).max_episode_steps == entry(env_id).max_episode_steps


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


@pytest.mark.parametrize("env_id", env_params())
def test_oracle_agent_wins_through_gym_make(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle asked afresh every turn (as OracleAgent does) wins within the registered turn budget."""
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path / "cache"))
    oracle_wins_with_documented_keys(env_id, tmp_path)


def _declaring_classes() -> list[type]:
    """Every class behind a registered id, and their bases, that declares its own ``info_keys``."""
    found: dict[str, type] = {}
    for item in suite_entries():
        try:
            cls = env_class(item.id)
        except ImportError:  # a backend missing here; its class is checked where it is installed
            continue
        for base in inspect.getmro(cls):
            if "info_keys" in vars(base) and vars(base)["info_keys"]:
                found[f"{base.__module__}.{base.__qualname__}"] = base
    return [found[name] for name in sorted(found)]


@pytest.mark.parametrize("cls", _declaring_classes(), ids=lambda c: c.__name__)
def test_each_declared_info_key_is_documented_in_its_class_docstring(cls: type) -> None:
    """An env's own keys are listed in its docstring (as Gymnasium envs document theirs) and never
    redefine a key of the shared contract."""
    keys = vars(cls)["info_keys"]
    assert all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in keys.items())
    assert not set(keys) & set(INFO_KEYS), f"{cls.__name__} redeclares shared keys {sorted(set(keys) & set(INFO_KEYS))}"
    doc = inspect.getdoc(cls) or ""
    assert not [k for k in keys if f"``{k}``" not in doc], f"{cls.__name__}'s docstring does not list every key of info_keys"


def test_core_info_keeps_only_the_shared_contract() -> None:
    """Benchmark keys live in their env classes: core/info.py holds no key that an env declares."""
    import agentgym_suite.core.info as info

    assert not hasattr(info, "ENV_INFO_KEYS")
    declared = {k for cls in _declaring_classes() for k in vars(cls)["info_keys"]}
    assert declared and not declared & set(INFO_KEYS)
    assert undocumented_keys(["task_id", "theme"]) == ["theme"]  # only with the env that declares it
    assert undocumented_keys(["task_id", "theme"], env_class("SyntheticTools-v0")) == []


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

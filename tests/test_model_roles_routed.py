"""Every model-played role a registered env declares goes through the role client (cache and ledger).

The roles are read from each env class's declared hooks (``user_setting``, ``judge_setting``,
``policy_setting``: :func:`~agentgym_suite.llm.role_client.declared_roles`), never from a list of
env ids. Each role is given a model served by a local OpenAI-compatible stub; the oracle plays the
env's first tasks until every role has spoken, and the run's ledger must show its calls under the
role's name. What the stand-ins need is read from the env's ``fixture_profile`` too: ``role_kwargs``
(settings under which every role is asked, such as EnvACE's ``reward_mode='judge'``) and
``role_replies`` (answers that meet a role's contract, such as its world model's
``<execution_result>``, so the episode goes on to where the judge is asked).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.llm.call_cache import LEDGER_FILE, CallLedger
from agentgym_suite.llm.role_client import ModelCallSettings, declared_roles, model_calls
from agentgym_suite.registration import suite_entries
from reliability.registered import cheap_kwargs, env_class, profile, skip_unless_usable
from reliability.stub_openai import stub_server

ROLE_ENVS = [entry.id for entry in suite_entries() if declared_roles(env_class(entry.id))]
TASKS_TRIED, STEPS = 12, 25
ROUTED = re.compile(r"role_backend\(\s*[\"']([a-z_]+)[\"']")


def test_some_registered_envs_declare_model_roles() -> None:
    assert len(ROLE_ENVS) >= 3  # the simulated users and judges of τ², VitaBench, EnvACE's world model...
    declared = {role for env_id in ROLE_ENVS for role in declared_roles(env_class(env_id)).values()}
    assert {"user", "judge", "world_model"} <= declared


def test_every_role_a_package_routes_is_declared_by_its_envs() -> None:
    """A role an env's package sends through the client (``role_backend("judge", ...)``) is one of the roles
    its registered envs declare, so ``--judge``, ``--rescore`` and the test above reach it."""
    for entry in suite_entries():
        cls = env_class(entry.id)
        module = getattr(cls, "__module__", "") or ""
        if not module.startswith("agentgym_suite.envs."):
            continue
        package = Path(importlib.import_module(module).__file__ or "").parent
        routed = {m for f in package.glob("*.py") for m in ROUTED.findall(f.read_text(encoding="utf-8"))}
        missing = routed - set(declared_roles(cls).values())
        assert not missing, f"{entry.id}: its package routes the roles {sorted(missing)} but the env declares no setting for them"


@pytest.mark.parametrize("env_id", ROLE_ENVS)
def test_each_declared_role_is_routed_through_the_client(env_id: str, tmp_path: Path) -> None:
    skip_unless_usable(env_id)
    roles = declared_roles(env_class(env_id))
    user_setting = str(getattr(env_class(env_id), "user_setting", "") or "")
    replies = profile(env_id).role_replies

    def stand_in(body: dict[str, Any]) -> str:  # the model name is the role (see the specs below)
        reply = replies.get(body["model"])
        return reply(body["messages"]) if reply is not None else "###STOP###"

    with stub_server(faults={}, reply=stand_in) as (url, state):
        kwargs = {**cheap_kwargs(env_id, tmp_path), **profile(env_id).role_kwargs}
        for setting, role in roles.items():
            spec = f"openai:{role}@{url}"
            kwargs[setting] = f"llm:{spec}" if setting == user_setting else spec
        ledger = tmp_path / LEDGER_FILE
        heard: set[str] = set()
        with model_calls(ModelCallSettings(cache_dir=tmp_path / "cache", ledger=ledger)):
            env = gym.make(env_id, **kwargs)
            try:
                for task in list(env.unwrapped.task_ids())[:TASKS_TRIED]:
                    _play(env, task)
                    heard = {row["role"] for row in CallLedger(ledger).rows()} if ledger.exists() else set()
                    if set(roles.values()) <= heard:
                        break
            finally:
                env.close()
        asked = {e.body["model"] for e in state.answered()}
    assert set(roles.values()) <= heard, f"{env_id}: roles {sorted(set(roles.values()) - heard)} never went through the client"
    assert set(roles.values()) <= asked  # and each reached its model


def _play(env: gym.Env, task: str) -> dict[str, Any]:
    _, info = env.reset(seed=0, options={"task_id": task})
    agent = OracleAgent()
    agent.reset(env, seed=0)
    observation = ""
    for _ in range(STEPS):
        try:
            action = agent.act(observation, info)
        except Exception:  # the oracle has nothing left to say: the episode's roles have been heard
            break
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return info

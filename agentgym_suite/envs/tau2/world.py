"""One tau2 episode's world: the agent-side and user-side databases and their toolkits.

Also the two deterministic pieces of scoring that need a world: applying a task's initial
state and replaying its gold actions on a fresh copy (the reference for the DB reward).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from agentgym_suite.envs.tau2.airline import AirlineTools
from agentgym_suite.envs.tau2.banking.agent_tools import BankingTools
from agentgym_suite.envs.tau2.banking.user_tools import BankingUserTools
from agentgym_suite.envs.tau2.data import DomainData
from agentgym_suite.envs.tau2.mock import MockTools, MockUserTools
from agentgym_suite.envs.tau2.retail import RetailTools
from agentgym_suite.envs.tau2.telecom import TelecomTools
from agentgym_suite.envs.tau2.telecom_device import TelecomUserTools
from agentgym_suite.envs.tau2.toolkit import DomainTools

AGENT_TOOLKITS: dict[str, type[DomainTools]] = {"retail": RetailTools, "airline": AirlineTools, "telecom": TelecomTools, "mock": MockTools,
                                                "banking_knowledge": BankingTools}
USER_TOOLKITS: dict[str, type[DomainTools]] = {"telecom": TelecomUserTools, "mock": MockUserTools,
                                               "banking_knowledge": BankingUserTools}


def deep_update(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """Merge ``patch`` into ``target`` recursively (dicts merge, anything else replaces)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_update(target[key], value)
        else:
            target[key] = json.loads(json.dumps(value))


def state_delta(base: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Per table: records of ``state`` that differ from ``base``, and keys ``base`` has but ``state`` lacks."""
    delta: dict[str, Any] = {}
    for table in sorted(set(base) | set(state)):
        old, new = base.get(table), state.get(table)
        if isinstance(old, dict) and isinstance(new, dict):
            changed = {k: v for k, v in new.items() if k not in old or old[k] != v}
            removed = sorted(k for k in old if k not in new)
            if changed or removed:
                delta[table] = {"changed": changed, "removed": removed}
        elif old != new:
            delta[table] = {"value": new}
    return delta


@dataclass
class World:
    """The live state of one episode."""

    agent: DomainTools
    user: DomainTools | None
    pristine: dict[str, Any]
    user_hash_is_agent_hash: bool = False
    """Upstream quirk: initialisation data for the agent's side points the user side at the agent's
    database, so from then on the "user database" upstream hashes is the agent's (mock domain only)."""

    def state_hash(self) -> str:
        """SHA-256 of the agent-side database, canonically serialised.

        Computed over the records that differ from the domain's pristine database (plus
        removed keys), which identifies the full state exactly (every episode starts from the
        same pristine copy) at a fraction of the cost of serialising megabytes.
        """
        payload = json.dumps(state_delta(self.pristine, self.agent.db), sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def user_state_hash(self) -> str:
        """SHA-256 of the user-side database (the customer's phone in telecom; empty where the customer has none).

        τ²-bench's DB check compares this hash with the gold run's too, so a phone left in another
        state than the gold actions leave it fails the check.
        """
        if self.user_hash_is_agent_hash:
            return self.state_hash()
        state = self.user.db if self.user is not None else None
        payload = json.dumps(state, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def run(self, env_type: str, name: str, arguments: dict[str, Any]) -> Any:
        """Run a function of the agent (``assistant``) or user side by name; raises ValueError on refusal."""
        side = self.user if env_type == "user" else self.agent
        if side is None:
            raise ValueError(f"this domain has no {env_type}-side functions")
        return side.call(name, dict(arguments))


def build_world(data: DomainData, task: dict[str, Any]) -> World:
    """A fresh world for ``task`` with its initial state applied."""
    agent_cls = AGENT_TOOLKITS[data.domain]
    user_cls = USER_TOOLKITS.get(data.domain)
    agent = agent_cls.for_task(data.fresh_db(), task, data.folder)
    world = World(agent, user_cls(data.fresh_user_db()) if user_cls else None, data.pristine_db)
    world.agent.attach(world.user)
    world.user_hash_is_agent_hash = bool(getattr(agent, "shares_user_db", False)) and world.user is not None
    initial = task.get("initial_state") or {}
    init_data = initial.get("initialization_data") or {}
    if init_data.get("agent_data"):
        deep_update(world.agent.db, init_data["agent_data"])
        world.user_hash_is_agent_hash = world.user is not None
    if init_data.get("user_data") and world.user is not None:
        deep_update(world.user.db, init_data["user_data"])
    for action in initial.get("initialization_actions") or []:
        world.run(action.get("env_type", "assistant"), action["func_name"], action.get("arguments") or {})
    for message in initial.get("message_history") or []:  # replay the pre-filled conversation's calls
        for call in message.get("tool_calls") or []:
            try:
                world.run("user" if message.get("role") == "user" else "assistant", call["name"], call.get("arguments") or {})
            except (ValueError, KeyError, TypeError):
                continue
    return world


def gold_actions(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's expected actions (possibly empty)."""
    return list((task.get("evaluation_criteria") or {}).get("actions") or [])


def replay_gold(data: DomainData, task: dict[str, Any]) -> World:
    """A fresh world after running every gold action in order (refused actions change nothing).

    As upstream's evaluator does, the gold actions run without re-synchronising the two sides
    between calls (telecom's phone keeps what it had when the actions began).
    """
    world = build_world(data, task)
    for side in (world.agent, world.user):
        if side is not None and hasattr(side, "sync_paused"):
            side.sync_paused = True
    for action in gold_actions(task):
        try:
            world.run(action.get("requestor", "assistant"), action["name"], action.get("arguments") or {})
        except (ValueError, KeyError, TypeError):
            continue
    return world

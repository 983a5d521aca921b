"""The executable multi-turn backends of BFCL (file system, trading bot, travel, ...).

A :class:`BackendSession` holds one instance per involved class, loaded with the task's
initial configuration, and dispatches calls by name to public methods on an explicit
allow-list (the names in the task's function docs). Nothing is evaluated from text.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from typing import Any, Iterable

from agentgym_suite.core.errors import BackendNotInstalledError, NoNetworkError
from agentgym_suite.envs.bfcl.call_strings import CallStringError, bind_arguments, parse_call_string
from agentgym_suite.envs.bfcl.data import INSTALL_COMMAND

_MODULE_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code."
BACKEND_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
STATELESS = ("MathAPI",)


def backend_class(class_name: str) -> type:
    """Import and return one backend class."""
    if class_name not in BACKEND_MODULES:
        raise NoNetworkError(f"BFCL backend {class_name!r} is not available offline (it needs the network or a hub model).")
    try:
        module = importlib.import_module(_MODULE_PREFIX + BACKEND_MODULES[class_name])
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"Cannot import the BFCL backend {class_name} ({exc}). Install it with:  {INSTALL_COMMAND}"
        ) from exc
    return getattr(module, class_name)


def result_text(result: Any) -> str:
    """A call result as BFCL records it: strings as is, dicts as JSON, anything else ``str``."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


class BackendSession:
    """Backend instances of one episode, with allow-listed dispatch.

    Args:
        involved_classes: backend class names of the task.
        initial_config: the task's ``initial_config`` (class name -> state).
        allowed: method names callable in this session.
        long_context: load the long-context variants of the scenarios.
    """

    def __init__(self, involved_classes: Iterable[str], initial_config: dict[str, Any], allowed: Iterable[str], *, long_context: bool = False) -> None:
        instances: dict[str, Any] = {}
        for class_name in involved_classes:
            instance = backend_class(class_name)()
            if class_name not in STATELESS:
                instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
            instances[class_name] = instance
        self._adopt(instances, allowed)

    @classmethod
    def from_instances(cls, instances: dict[str, Any], allowed: Iterable[str]) -> BackendSession:
        """A session over backend instances built and loaded elsewhere (web search, memory)."""
        session = cls.__new__(cls)
        session._adopt(instances, allowed)
        return session

    def _adopt(self, instances: dict[str, Any], allowed: Iterable[str]) -> None:
        self.instances = dict(instances)
        self.owner: dict[str, str] = {}
        self.allowed = set(allowed)
        for class_name, instance in self.instances.items():
            for name, _ in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.owner.setdefault(name, class_name)

    def method(self, name: str) -> Any:
        """The bound public method ``name``; raises ``KeyError`` when it is not allow-listed."""
        if name.startswith("_") or name not in self.allowed or name not in self.owner:
            raise KeyError(f"{name} is not an available function")
        return getattr(self.instances[self.owner[name]], name)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        """Run one call; return (raw result, BFCL result text). Errors become result text."""
        try:
            result = self.method(name)(**arguments)
        except Exception as exc:  # the backend reporting a bad call is part of the task
            text = f"Error during execution: {exc}"
            return {"error": text}, text
        return result, result_text(result)

    def call_string(self, text: str) -> tuple[Any, str]:
        """Run a ground-truth call string (parsed with ``ast``, literal arguments only)."""
        try:
            parsed = parse_call_string(text)
            kwargs = bind_arguments(parsed, self.method(parsed.name))
        except (CallStringError, KeyError, TypeError) as exc:
            message = f"Error during execution: {exc}"
            return {"error": message}, message
        return self.call(parsed.name, kwargs)

    def state(self) -> dict[str, dict[str, Any]]:
        """Public attributes of every instance (what BFCL compares between model and ground truth)."""
        return {
            name: {k: v for k, v in vars(inst).items() if not k.startswith("_")}
            for name, inst in self.instances.items()
        }


def compare_states(model: BackendSession, truth: BackendSession) -> dict[str, list[str]]:
    """Attributes whose values differ, per class (empty when the states match)."""
    diffs: dict[str, list[str]] = {}
    for class_name, gt in truth.instances.items():
        mine = model.instances[class_name]
        bad = [k for k in vars(gt) if not k.startswith("_") and getattr(mine, k, object()) != getattr(gt, k)]
        if bad:
            diffs[class_name] = bad
    return diffs


def contains_all(have: list[str], need: list[str]) -> list[str]:
    """Items of ``need`` missing from ``have`` (as a multiset, order ignored)."""
    pool = list(have)
    missing = []
    for item in need:
        if item in pool:
            pool.remove(item)
        else:
            missing.append(item)
    return missing

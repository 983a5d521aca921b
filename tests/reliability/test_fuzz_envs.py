"""Thousands of generated actions through every registered env's ``step``.

Each hypothesis example resets an env (one of its first tasks) and plays a list of actions
drawn from: admissible commands and oracle actions, tag soup, control characters, empty and
oversized text, non-strings, and tool calls with fuzzed (often path-like) arguments. Checked
after every step: no exception, a well-formed 5-tuple with the shared info keys, and
``action_valid`` False for empty/oversized/non-text actions (and for control characters in
command envs), True for an admissible command or the oracle's next action. Tool calls with
path-like arguments must not touch those paths on disk.

The default run plays a few hundred actions per env; ``-m slow`` plays ten times as many.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentgym_suite  # noqa: F401  (registers the env ids)
from agentgym_suite.core.actions import _CONTROL
from agentgym_suite.core.info import REQUIRED_INFO_KEYS
from agentgym_suite.core.spaces import MAX_ACTION_CHARS
from agentgym_suite.registration import ENV_ENTRIES, missing_requirements

from reliability.audit import watch

ESCAPES = ["../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "/tmp/agentgym-escape", "../../../../root"]
SECRET_MARKERS = ("etc/passwd", "id_rsa", "agentgym-escape", "../../../../root")
COMMAND_FORMATS = ("plain", "think_action", "search")
ACTIONS_PER_EXAMPLE = 8

# examples per env in the default run (x ACTIONS_PER_EXAMPLE actions at most; x10 with -m slow)
BUDGET = {"ALFWorld-v0": 4, "ScienceWorld-v0": 6, "TextWorld-v0": 40}
DEFAULT_BUDGET = 50
ADMISSIBLE_NOT_GUARANTEED = {"ScienceWorld-v0"}
"""Envs whose admissible list may hold commands the simulator then rejects (ScienceWorld lists
'open drawer' where it answers 'No known action matches that input.'); only the other checks apply."""


def _java() -> bool:
    try:
        return subprocess.run(["java", "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.fixture(scope="module")
def env_kwargs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """Each env's own ``fixture_kwargs`` (fixture data written into a private folder), made once."""
    root = tmp_path_factory.mktemp("fuzz")
    made: dict[str, dict[str, Any]] = {}

    def kwargs(env_id: str) -> dict[str, Any]:
        if env_id not in made:
            made[env_id] = _env_class(env_id).fixture_kwargs(root / env_id)
        return made[env_id]

    return kwargs


@pytest.fixture(scope="module")
def envs(env_kwargs: Callable[[str], dict[str, Any]], monkeypatch_module: pytest.MonkeyPatch) -> Any:
    """One env per id for the whole module (closed at the end)."""
    cache: dict[str, gym.Env] = {}

    def get(env_id: str) -> gym.Env:
        if env_id not in cache:
            cache[env_id] = gym.make(env_id, **env_kwargs(env_id))
        return cache[env_id]

    yield get
    for env in cache.values():
        env.close()


@pytest.fixture(scope="module")
def monkeypatch_module(tmp_path_factory: pytest.TempPathFactory) -> Any:
    patch = pytest.MonkeyPatch()
    patch.setenv("AGENTGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield patch
    patch.undo()


def _ids() -> list[Any]:
    params = []
    for item in ENV_ENTRIES:
        marks = [pytest.mark.java] if item.id == "ScienceWorld-v0" else []
        params.append(pytest.param(item.id, marks=marks, id=item.id))
    return params


def _env_class(env_id: str) -> Any:
    return load_env_creator(next(e for e in ENV_ENTRIES if e.id == env_id).entry_point)


def _usable(env_id: str) -> None:
    item = next(e for e in ENV_ENTRIES if e.id == env_id)
    missing = missing_requirements(item)
    if not any(m.startswith("module") for m in missing) and _env_class(env_id).fixture_replaces_data:
        missing = [m for m in missing if not m.startswith("data")]  # its fixture kwargs bring generated data
    if missing:
        pytest.skip(f"{env_id} is not usable here: {missing}")
    if env_id == "ScienceWorld-v0" and not _java():
        pytest.skip("needs a Java runtime")


# ---------------------------------------------------------------------------- strategies
_args_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30),
              st.sampled_from(ESCAPES)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_SOUP = ["<think>", "</think>", "<action>", "</action>", "<tool_call>", "</tool_call>", "<search>", "</search>",
         "<answer>", "</answer>", "search[", "click[", "]", "{", "}", '"name"', ":", "look", "go north",
         "\x00", "\x1b", "é", "中文", "\n", " ", "<execution_result>", "</execution_result>", *ESCAPES]


def _tool_call(names: list[str]) -> st.SearchStrategy[str]:
    name = st.sampled_from(names) if names else st.text(max_size=10)
    args = st.dictionaries(st.text(min_size=1, max_size=12), _args_value, max_size=4)
    return st.builds(lambda n, a: f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>", name, args)


def _action(info: dict[str, Any], oracle: list[str], tool_names: list[str], param_names: list[str]) -> st.SearchStrategy:
    admissible = [a for a in (info.get("admissible_actions") or []) if isinstance(a, str)]
    path_calls = st.builds(
        lambda n, p, e: f"<tool_call>\n{json.dumps({'name': n, 'arguments': {p: e}})}\n</tool_call>",
        st.sampled_from(tool_names or ["tool"]), st.sampled_from(param_names or ["path"]), st.sampled_from(ESCAPES))
    options = [
        st.just(""), st.text(" \t\n", max_size=4), st.text(max_size=120),
        st.text(st.characters(min_codepoint=0, max_codepoint=31), min_size=1, max_size=12),
        st.integers(1, 50).map(lambda n: "go " * (MAX_ACTION_CHARS // 3 + n)),
        st.lists(st.sampled_from(_SOUP), max_size=12).map("".join),
        st.sampled_from([None, 3, b"look", ["look"], {"name": "x"}]),
        _tool_call(tool_names), path_calls,
    ]
    if admissible:
        options += [st.sampled_from(admissible)] * 3
    if oracle:
        options += [st.just(oracle[0])] * 2
    return st.one_of(options)


# ---------------------------------------------------------------------------- checks
def _expected_valid(action: Any, fmt: str, admissible: list[str], oracle_next: str | None) -> bool | None:
    """What ``action_valid`` must be for ``action``, or None when either answer is acceptable."""
    if not isinstance(action, str) or not action.strip() or len(action) > MAX_ACTION_CHARS:
        return False
    if fmt in COMMAND_FORMATS and _CONTROL.search(action.strip()):
        return False
    if fmt == "plain" and action in admissible:
        return True
    if oracle_next is not None and action == oracle_next:
        return True
    return None


def _check_step(result: Any) -> dict[str, Any]:
    assert isinstance(result, tuple) and len(result) == 5
    observation, reward, terminated, truncated, info = result
    assert isinstance(observation, str)
    assert isinstance(reward, float) and math.isfinite(reward)
    assert isinstance(terminated, bool) and isinstance(truncated, bool)
    missing = [k for k in REQUIRED_INFO_KEYS if k not in info]
    assert not missing, f"info lacks {missing}"
    assert isinstance(info["action_valid"], bool)
    return info


def _tool_schema_names(info: dict[str, Any]) -> tuple[list[str], list[str]]:
    names, params = [], []
    for tool in info.get("tools") or []:
        fn = tool.get("function", tool) if isinstance(tool, dict) else {}
        if fn.get("name"):
            names.append(str(fn["name"]))
        params += list(((fn.get("parameters") or {}).get("properties") or {}).keys())
    return names, sorted(set(params))


def _oracle(env: gym.Env) -> list[str]:
    try:
        return list(env.unwrapped.oracle())
    except Exception:  # some envs have no oracle mid-episode; the fuzz does not need one
        return []


def fuzz(env: gym.Env, examples: int, check_admissible: bool = True) -> None:
    tasks = list(env.unwrapped.task_ids())[:3]
    fmt = getattr(env.unwrapped.action_format, "name", "")
    stats = {"steps": 0, "valid_checked": 0}

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), task=st.sampled_from(tasks))
    def run(data: st.DataObject, task: str) -> None:
        _, info = env.reset(seed=0, options={"task_id": task})
        for _ in range(ACTIONS_PER_EXAMPLE):
            oracle = _oracle(env)
            names, params = _tool_schema_names(info)
            action = data.draw(_action(info, oracle, names, params))
            admissible = [a for a in (info.get("admissible_actions") or []) if isinstance(a, str)] if check_admissible else []
            expected = _expected_valid(action, fmt, admissible, oracle[0] if oracle else None)
            with watch() as events:
                result = env.step(action)
            touched = [e for e in events if any(m in " ".join(e[1]) for m in SECRET_MARKERS)]
            assert not touched, f"{action!r} reached the disk: {touched}"
            info = _check_step(result)
            stats["steps"] += 1
            if expected is not None:
                stats["valid_checked"] += 1
                assert info["action_valid"] is expected, (action, info.get("invalid_reason"), result[0][:300])
            if result[2] or result[3]:
                break

    run()
    assert stats["steps"] >= examples and stats["valid_checked"] > 0


@pytest.mark.parametrize("env_id", _ids())
def test_generated_actions_never_break_step(env_id: str, envs: Any) -> None:
    _usable(env_id)
    fuzz(envs(env_id), BUDGET.get(env_id, DEFAULT_BUDGET), env_id not in ADMISSIBLE_NOT_GUARANTEED)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", _ids())
def test_thousands_of_generated_actions_never_break_step(env_id: str, envs: Any) -> None:
    _usable(env_id)
    fuzz(envs(env_id), 10 * BUDGET.get(env_id, DEFAULT_BUDGET), env_id not in ADMISSIBLE_NOT_GUARANTEED)

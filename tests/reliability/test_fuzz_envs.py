"""Thousands of generated actions through every registered env's ``step``.

Each hypothesis example resets an env (one of its first tasks) and plays a list of actions
drawn from: admissible commands and oracle actions, tag soup, control characters, empty and
oversized text, non-strings, tool calls with fuzzed (often path-like) arguments, and the
hostile classes of :mod:`reliability.hostile` (numbers over Python's conversion limit, text
of control characters only, lone surrogates, the engines' out-of-world commands, calls to
tools that do not exist, calls the backend refuses). Checked after every step: no exception,
a well-formed 5-tuple with the shared info keys, and ``action_valid`` False for empty,
oversized, non-text, invisible and unencodable actions (and for control characters in command
envs, and for the commands an env declares it always refuses, such as TextWorld's and
ScienceWorld's out-of-world ones), True for an admissible command or the oracle's next action.
Budgets and the rest of what differs between envs come from each env's ``fixture_profile``. Tool calls with path-like arguments must not touch those paths.

A second test plays part of the oracle's plan, interleaves hostile actions with its next
steps and lets the oracle finish: every env with an oracle must still win from the state the
hostile actions left, and every class that applies to the env must have been drawn.

Both run in an empty working directory with a private cache folder, and the directory must
still be empty afterwards (an interpreter's ``save`` or ``script`` writes there); Python-level
writes during steps must stay inside the test's own folders.

The default run plays a few hundred actions per env; ``-m slow`` plays ten times as many.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentgym_suite.core.actions import _CONTROL, encoding_problem, has_visible_text
from agentgym_suite.core.info import REQUIRED_INFO_KEYS
from agentgym_suite.core.spaces import MAX_ACTION_CHARS

from reliability.audit import watch
from reliability.hostile import INVALID_KINDS, hostile_action, hostile_strategies
from reliability.registered import (
    cheap_kwargs, env_params, finish_with_oracle, goes_on, is_tool_env, profile, skip_unless_usable, winnable_tasks,
)

ESCAPES = ["../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "/tmp/agentgym-escape", "../../../../root"]
SECRET_MARKERS = ("etc/passwd", "id_rsa", "agentgym-escape", "../../../../root")
COMMAND_FORMATS = ("plain", "think_action", "search")
ACTIONS_PER_EXAMPLE = 8
HOSTILE_PER_EXAMPLE = 6

# Each env's budgets (examples per run; x ACTIONS_PER_EXAMPLE actions at most; x10 with -m slow), whether
# its admissible list is guaranteed, whether refused calls are scored and which commands it always refuses
# come from its own declaration, ``fixture_profile`` (agentgym_suite/core/fixture_profile.py).


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """An empty working directory and a private cache folder for the module's envs."""
    folders = {"cwd": tmp_path_factory.mktemp("cwd"), "cache": tmp_path_factory.mktemp("cache"),
               "data": tmp_path_factory.mktemp("fixtures")}
    patch = pytest.MonkeyPatch()
    patch.setenv("AGENTGYM_CACHE", str(folders["cache"]))
    patch.chdir(folders["cwd"])
    yield folders
    patch.undo()


@pytest.fixture(scope="module")
def envs(sandbox: dict[str, Path]) -> Iterator[Callable[..., gym.Env]]:
    """One env per (id, kwargs overrides) for the whole module (closed at the end)."""
    cache: dict[tuple[str, bool], gym.Env] = {}

    def get(env_id: str, keep_going: bool = False) -> gym.Env:
        key = (env_id, keep_going)
        if key not in cache:
            extra = goes_on(env_id) if keep_going else {}
            cache[key] = gym.make(env_id, **cheap_kwargs(env_id, sandbox["data"]), **extra)
        return cache[key]

    yield get
    for env in cache.values():
        env.close()


@pytest.fixture()
def empty_cwd(sandbox: dict[str, Path]) -> Iterator[Path]:
    """The empty working directory; fails the test when anything was written into it."""
    cwd = sandbox["cwd"]
    assert Path.cwd() == cwd and not list(cwd.iterdir())
    yield cwd
    left = sorted(p.name for p in cwd.iterdir())
    for path in cwd.iterdir():  # leave it empty for the next env, whatever happened
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert not left, f"the env wrote {left} into the working directory"


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


def _admissible(info: dict[str, Any]) -> list[str]:
    return [a for a in (info.get("admissible_actions") or []) if isinstance(a, str)]


def _action(env: gym.Env, info: dict[str, Any], oracle: list[str], tool_env: bool) -> st.SearchStrategy:
    admissible = _admissible(info)
    tool_names, param_names = _tool_schema_names(info)
    path_calls = st.builds(
        lambda n, p, e: f"<tool_call>\n{json.dumps({'name': n, 'arguments': {p: e}})}\n</tool_call>",
        st.sampled_from(tool_names or ["tool"]), st.sampled_from(param_names or ["path"]), st.sampled_from(ESCAPES))
    hostile = hostile_action(info, env.unwrapped.format_action, tool_env, oracle[:1] + admissible[:5])
    options = [
        st.just(""), st.text(" \t\n", max_size=4), st.text(max_size=120),
        st.text(st.characters(min_codepoint=0, max_codepoint=31), min_size=1, max_size=12),
        st.integers(1, 50).map(lambda n: "go " * (MAX_ACTION_CHARS // 3 + n)),
        st.lists(st.sampled_from(_SOUP), max_size=12).map("".join),
        st.sampled_from([None, 3, b"look", ["look"], {"name": "x"}]),
        _tool_call(tool_names), path_calls, hostile, hostile,
    ]
    if admissible:
        options += [st.sampled_from(admissible)] * 3
    if oracle:
        options += [st.just(oracle[0])] * 2
    return st.one_of(options)


# ---------------------------------------------------------------------------- checks
def _expected_valid(action: Any, fmt: str, refused: Callable[[str], Any] | None, admissible: list[str],
                    oracle_next: str | None, max_chars: int = MAX_ACTION_CHARS) -> bool | None:
    """What ``action_valid`` must be for ``action``, or None when either answer is acceptable
    (``refused``: the env's declared ``fixture_profile.refused_command``)."""
    if not isinstance(action, str) or not action.strip() or len(action) > max_chars:
        return False
    if not has_visible_text(action) or encoding_problem(action):
        return False
    if fmt in COMMAND_FORMATS and _CONTROL.search(action.strip()):
        return False
    if refused is not None and fmt == "plain" and refused(action):
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


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _writes(events: list[tuple[str, tuple]]) -> list[str]:
    """Paths a step wrote, created, moved or removed (from the audit events of :func:`watch`)."""
    written = []
    for event, args in events:
        if event == "open" and len(args) >= 3:
            mode, flags = args[1], args[2]
            if any(c in mode for c in "wax+") or (flags.lstrip("-").isdigit() and int(flags) & _WRITE_FLAGS):
                written.append(args[0])
        elif event in ("os.rename", "shutil.move", "shutil.copyfile", "os.symlink", "os.link") and len(args) >= 2:
            written.extend(args[:2] if event in ("os.rename", "shutil.move") else args[1:2])  # a copy writes only its target
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.truncate", "shutil.rmtree"):
            written.append(args[0])
    return written


def _step_watched(env: gym.Env, action: Any, allowed: tuple[Path, ...]) -> Any:
    with watch() as events:
        result = env.step(action)
    touched = [e for e in events if any(m in " ".join(e[1]) for m in SECRET_MARKERS)]
    assert not touched, f"{action!r} reached the disk: {touched}"
    stray = [p for p in _writes(events) if not any(Path(p).resolve().is_relative_to(root) for root in allowed)]
    assert not stray, f"{action!r} wrote outside the run's folders: {stray}"
    return result


def _allowed(sandbox: dict[str, Path]) -> tuple[Path, ...]:
    """Where a step may write: the run's cache and fixture folders, and the system temp folder (jericho
    copies its interpreter library into a fresh temp dir whenever a game is loaded, which a SkillRise
    trial does inside a step when it moves to its next task)."""
    return (sandbox["cache"].resolve(), sandbox["data"].resolve(), Path(tempfile.gettempdir()).resolve())


def fuzz(env: gym.Env, env_id: str, examples: int, allowed: tuple[Path, ...]) -> None:
    """Play ``examples`` hypothesis examples of generated actions through ``env`` (see the module docstring)."""
    tasks = list(env.unwrapped.task_ids())[:3]
    fmt = getattr(env.unwrapped.action_format, "name", "")
    tool_env = is_tool_env(env_id)
    declared = profile(env_id)
    stats = {"steps": 0, "valid_checked": 0}

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), task=st.sampled_from(tasks))
    def run(data: st.DataObject, task: str) -> None:
        _, info = env.reset(seed=0, options={"task_id": task})
        for _ in range(ACTIONS_PER_EXAMPLE):
            oracle = _oracle(env)
            action = data.draw(_action(env, info, oracle, tool_env))
            admissible = _admissible(info) if declared.admissible_guaranteed else []
            expected = _expected_valid(action, fmt, declared.refused_command, admissible, oracle[0] if oracle else None,
                                       env.unwrapped.action_space.max_length)  # a tool env's follows its token budget
            result = _step_watched(env, action, allowed)
            info = _check_step(result)
            stats["steps"] += 1
            if expected is not None:
                stats["valid_checked"] += 1
                assert info["action_valid"] is expected, (action, info.get("invalid_reason"), result[0][:300])
            if result[2] or result[3]:
                break

    run()
    assert stats["steps"] >= examples and stats["valid_checked"] > 0


def oracle_after_hostile_actions(env: gym.Env, env_id: str, examples: int, allowed: tuple[Path, ...]) -> dict[str, int]:
    """Play part of the oracle's plan, interleave hostile actions with its next steps, then let the
    oracle finish: it must win.

    The env is stepped without Gymnasium's ``TimeLimit``: the refused actions count as steps, and
    a budget of 4 (SearchQA) would otherwise end the episode before the oracle could finish.
    """
    env = env.unwrapped
    tasks = winnable_tasks(env)
    tool_env = is_tool_env(env_id)
    refusals = tool_env and not profile(env_id).refusals_scored
    stats: Counter[str] = Counter()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), task=st.sampled_from(tasks))
    def run(data: st.DataObject, task: str) -> None:
        _, info = env.reset(seed=0, options={"task_id": task})
        left_the_plan = hostile = False
        kinds = list(hostile_strategies(info, env.format_action, tool_env, [], refusals))
        order, drawn = data.draw(st.permutations(kinds)), 0  # every kind once before any comes again
        plan = env.oracle()
        for action in plan[:data.draw(st.integers(0, max(len(plan) - 1, 0)))]:  # start somewhere along the plan
            result = _step_watched(env, action, allowed)
            info = _check_step(result)
            assert info["action_valid"] and not result[2], action[:300]
        for _ in range(HOSTILE_PER_EXAMPLE):
            plan = env.oracle()
            assert plan, "the oracle ran dry before the episode ended"
            if data.draw(st.integers(0, 3)) == 0:  # one oracle step in four
                result = _step_watched(env, plan[0], allowed)
                info, terminated = _check_step(result), result[2]
                assert info["action_valid"], plan[0][:300]
                if terminated:
                    assert info["won"], "the oracle's own step ended the episode without a win"
                    stats["won_after_hostile"] += hostile
                    return
                continue
            kind = order[drawn % len(order)]
            drawn += 1
            strategies = hostile_strategies(info, env.format_action, tool_env, plan[:1] + _admissible(info)[:5], refusals)
            action = data.draw(strategies[kind])
            logged = len(getattr(env, "tool_log", []))
            free_text = info.get("role") == "curate"  # a SkillRise skill document: a long number is just text there
            result = _step_watched(env, action, allowed)
            info = _check_step(result)
            observation, reward, terminated, truncated, _ = result
            assert not (terminated or truncated), (kind, action[:200], observation[:300])
            if kind in INVALID_KINDS and not (free_text and kind == "huge_number"):
                assert info["action_valid"] is False and reward == 0.0, (kind, action[:200], observation[:300])
            if kind == "refused" and any(r.ok for r in env.tool_log[logged:]):
                left_the_plan = True  # the backend took the call after all: a real action, off the plan
                kind = "taken"
            stats[kind] += 1
            hostile = True
        if left_the_plan:
            return
        info = finish_with_oracle(env)
        assert info["won"], "the oracle could not win after hostile actions"
        stats["won_after_hostile"] += hostile

    run()
    return dict(stats)


def hostile_kinds(env_id: str) -> set[str]:
    """The hostile kinds that apply to ``env_id``, each of which the oracle test must have drawn."""
    kinds = {"huge_number", "invisible", "surrogate"}
    if is_tool_env(env_id):
        kinds |= set() if profile(env_id).refusals_scored else {"unknown_tool", "refused"}
    else:
        kinds.add("meta")
    return kinds


def fuzz_registered(env_id: str, env: gym.Env, allowed: tuple[Path, ...], scale: int = 1) -> None:
    """The generated-action fuzz at the env's declared budget (times ``scale``)."""
    fuzz(env, env_id, scale * profile(env_id).fuzz_examples, allowed)


def oracle_wins_after_hostile_actions(env_id: str, env: gym.Env, allowed: tuple[Path, ...], scale: int = 1) -> None:
    """The oracle-after-hostile-actions test at the env's declared budget (times ``scale``); ``env``
    made with the env's ``goes_on_kwargs``. Every kind that applies must have been drawn (at scale 1)."""
    stats = oracle_after_hostile_actions(env, env_id, scale * profile(env_id).oracle_examples, allowed)
    assert stats["won_after_hostile"] > 0, stats
    assert scale > 1 or hostile_kinds(env_id) <= set(stats), stats


@pytest.mark.parametrize("env_id", env_params())
def test_generated_actions_never_break_step(env_id: str, envs: Any, sandbox: dict[str, Path], empty_cwd: Path) -> None:
    skip_unless_usable(env_id)
    fuzz_registered(env_id, envs(env_id), _allowed(sandbox))


@pytest.mark.parametrize("env_id", env_params())
def test_oracle_still_wins_after_hostile_actions(env_id: str, envs: Any, sandbox: dict[str, Path], empty_cwd: Path) -> None:
    skip_unless_usable(env_id)
    oracle_wins_after_hostile_actions(env_id, envs(env_id, keep_going=True), _allowed(sandbox))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", env_params())
def test_thousands_of_generated_actions_never_break_step(env_id: str, envs: Any, sandbox: dict[str, Path],
                                                         empty_cwd: Path) -> None:
    skip_unless_usable(env_id)
    fuzz_registered(env_id, envs(env_id), _allowed(sandbox), scale=10)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", env_params())
def test_oracle_still_wins_after_many_hostile_actions(env_id: str, envs: Any, sandbox: dict[str, Path],
                                                      empty_cwd: Path) -> None:
    skip_unless_usable(env_id)
    oracle_wins_after_hostile_actions(env_id, envs(env_id, keep_going=True), _allowed(sandbox), scale=10)

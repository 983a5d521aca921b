"""Backends that die or break mid-run: each episode is recorded with the reason, the eval goes on.

* a tool that raises -> a tool error result the agent sees, never a crash;
* a TextWorld game file damaged on disk mid-run -> the cache regenerates it, or, when it
  cannot, the episode fails at reset with the reason (the Z-machine would end the process);
* the ScienceWorld JVM killed mid-episode -> truncated with the reason, a fresh env goes on.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym
import pytest

from agentgym_suite.agents.base import OracleAgent
from agentgym_suite.core.tool_calls import TOOL_EXECUTION_ERROR
from agentgym_suite.envs.textworld import env as textworld_env
from agentgym_suite.envs.textworld.games import DamagedGameError, story_file_problem
from agentgym_suite.evaluation.runner import evaluate

from reliability.fakes import TOOLS_ID

TW_KWARGS: dict[str, Any] = {"challenge": "tw-coin_collector", "n_games": 2}
FIRST, SECOND = 1234, 1235
"""Generator seeds of the two games (the default family seed; shared with the user cache)."""


class SabotageAgent(OracleAgent):
    """The oracle, which runs ``sabotage(env)`` once, before its ``at``-th action of the run."""

    name = "oracle"

    def __init__(self, sabotage: Callable[[gym.Env], None], at: int = 1) -> None:
        super().__init__()
        self.sabotage, self.at, self.acts = sabotage, at, 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.acts += 1
        if self.acts == self.at:
            self.sabotage(self._env)  # type: ignore[arg-type]
        return super().act(observation, info)


# ---------------------------------------------------------------------------- tool envs
def test_a_raising_tool_becomes_an_error_result_and_the_eval_goes_on(tmp_path: Path) -> None:
    result = evaluate(TOOLS_ID, "oracle", out_dir=tmp_path, env_kwargs={"crash_task": "tool-1"}, progress=False)
    by_task = {r.task_id: r for r in result.records}
    crashed = by_task.pop("tool-1")
    assert crashed.error is None and not crashed.won and crashed.truncated  # the oracle kept trying
    first = crashed.turns[0]
    assert TOOL_EXECUTION_ERROR in first.observation and "lookup service crashed" in first.observation
    assert first.action_valid is True  # a well-formed call whose tool failed
    assert all(r.won and r.error is None for r in by_task.values())


def test_end_on_tool_error_records_the_reason(tmp_path: Path) -> None:
    kwargs = {"crash_task": "tool-0", "end_on_tool_error": True}
    result = evaluate(TOOLS_ID, "oracle", out_dir=tmp_path, env_kwargs=kwargs, progress=False)
    by_task = {r.task_id: r for r in result.records}
    assert "a tool call failed" in (by_task["tool-0"].error or "") and len(by_task["tool-0"].turns) == 1
    assert by_task["tool-1"].won and by_task["tool-2"].won and result.summary["complete"]


# ---------------------------------------------------------------------------- TextWorld
@pytest.fixture(scope="module")
def tw_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two coin-collector games (generated into the user cache on first use), copied to a private dir."""
    root = tmp_path_factory.mktemp("tw-games")
    env = textworld_env.TextWorldEnv(**TW_KWARGS)
    for task_id in env.task_ids():
        source = Path(env.game_file(task_id))
        family = root / source.parent.name
        family.mkdir(exist_ok=True)
        for suffix in (".json", ".z8"):
            shutil.copy(source.with_suffix(suffix), family / source.with_suffix(suffix).name)
    env.close()
    return root


@pytest.fixture()
def games_dir(tw_games: Path, tmp_path: Path) -> Path:
    """A private copy of the generated games for one test to damage."""
    target = tmp_path / "games"
    shutil.copytree(tw_games, target)
    return target


def _game(games_dir: Path, seed: int) -> Path:
    return next(games_dir.glob(f"*/seed-{seed}.z8"))


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 3])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(bytes((b * 7 + 13) % 256 for b in data))
    elif how == "flip":  # one byte in the story body
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:])
    elif how == "chmod":
        path.chmod(0)


@pytest.mark.parametrize("how", ["truncate", "empty", "garbage", "flip"])
def test_story_file_check_spots_damage(games_dir: Path, how: str) -> None:
    path = _game(games_dir, FIRST)
    assert story_file_problem(path) == ""
    _damage(path, how)
    assert story_file_problem(path) != ""
    assert "cannot be read" in story_file_problem(games_dir / "missing.z8")


@pytest.mark.parametrize("how", ["truncate", pytest.param("garbage", marks=pytest.mark.slow), "chmod"])
def test_game_file_damaged_mid_run_is_regenerated(games_dir: Path, tmp_path: Path, how: str) -> None:
    """The second game's file is damaged while the first episode runs; the eval still wins both."""
    if how == "chmod" and os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    second = _game(games_dir, SECOND)
    agent = SabotageAgent(lambda env: _damage(second, how))
    kwargs = {**TW_KWARGS, "games_dir": str(games_dir)}
    result = evaluate("TextWorld-v0", agent, out_dir=tmp_path / "out", env_kwargs=kwargs, progress=False)
    assert len(result.records) == 2 and result.summary["complete"]
    assert all(r.won and r.error is None for r in result.records), [r.error for r in result.records]
    assert agent.acts >= 2 and story_file_problem(second) == ""


def test_game_file_that_cannot_be_regenerated_fails_the_episode_not_the_process(
    games_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = _game(games_dir, SECOND)
    _damage(damaged, "truncate")
    sound = _game(games_dir, FIRST)
    monkeypatch.setattr(textworld_env, "generate_game",
                        lambda challenge, settings, seed, root=None: damaged if seed == SECOND else sound)
    kwargs = {**TW_KWARGS, "games_dir": str(games_dir)}
    result = evaluate("TextWorld-v0", "oracle", out_dir=tmp_path / "out", env_kwargs=kwargs, progress=False)
    by_task = {r.task_id: r for r in result.records}
    bad = by_task["game-1"]
    assert bad.error_stage == "reset" and bad.error is not None and bad.error.startswith("DamagedGameError")
    assert "is cut short" in bad.error and "Delete it" in bad.error
    assert by_task["game-0"].won and result.summary["episodes"] == 2
    with pytest.raises(DamagedGameError):
        textworld_env.TextWorldEnv(**kwargs).reset(options={"task_id": "game-1"})


# ---------------------------------------------------------------------------- ScienceWorld
def _has_java() -> bool:
    try:
        return subprocess.run(["java", "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.java
@pytest.mark.skipif(not _has_java(), reason="needs a Java runtime")
def test_killed_jvm_mid_episode_is_recorded_and_the_eval_goes_on(tmp_path: Path) -> None:
    pytest.importorskip("scienceworld")
    killed: list[int] = []

    def kill_jvm(env: gym.Env) -> None:
        pid = env.unwrapped.jvm_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    agent = SabotageAgent(kill_jvm, at=2)
    kwargs = {"task": "find-living-thing", "max_admissible": None}
    result = evaluate("ScienceWorld-v0", agent, out_dir=tmp_path, episodes=2, env_kwargs=kwargs, progress=False)
    assert killed and len(result.records) == 2
    first, second = sorted(result.records, key=lambda r: len(r.turns))
    assert first.truncated and not first.won and "JVM" in (first.error or "")
    assert first.error_stage == "env" and len(first.turns) == 2
    assert second.won and second.error is None

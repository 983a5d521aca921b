"""A step that hangs: ``StepTimeout`` ends the episode truncated, and the owner replaces the env."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import pytest

from agentgym_suite.cli import main
from agentgym_suite.core.guards import EnvNeedsReplacement, StepTimeout, check_timeout, guard_env, needs_replacement
from agentgym_suite.evaluation.runner import evaluate
from agentgym_suite.llm.base import Sample, SamplingParams
from agentgym_suite.rollout.engine import RolloutEngine

from reliability.fakes import HANG_ID, HangEnv

LIMIT = 0.3


class BoxBackend:
    """Text backend that plays the box game: open the box, then take the key."""

    name = "box"

    def generate(self, prompts: Sequence[Any], params: SamplingParams, tools: Any = None) -> list[list[Sample]]:
        rows = []
        for prompt in prompts:
            text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
            action = "take key" if "box opens" in text else "open box"
            rows.append([Sample(text=action, has_token_ids=False)])
        return rows


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, "5", True])
def test_bad_timeouts_are_refused_with_a_hint(value: object) -> None:
    with pytest.raises(ValueError, match="seconds"):
        check_timeout(value)
    with pytest.raises(ValueError, match="seconds"):
        StepTimeout(HangEnv(), value)  # type: ignore[arg-type]


def test_no_timeout_leaves_the_env_unwrapped() -> None:
    env = HangEnv()
    assert guard_env(env, None) is env
    assert isinstance(guard_env(env, 2), StepTimeout) and check_timeout(2) == 2.0


def test_fast_steps_pass_through_unchanged() -> None:
    env = StepTimeout(gym.make(HANG_ID), 30)
    env.reset(options={"task_id": "task-0"})
    assert env.step("open box")[0] == "The box opens."
    _, reward, terminated, truncated, info = env.step("take key")
    assert (reward, terminated, truncated, info["won"]) == (1.0, True, False, True)
    assert env.broken is None and not needs_replacement(env)
    env.close()


def test_hung_step_ends_truncated_and_the_env_must_be_replaced() -> None:
    env = StepTimeout(gym.make(HANG_ID, hang_task="task-0"), LIMIT)
    env.reset(options={"task_id": "task-0"})
    env.step("open box")
    observation, reward, terminated, truncated, info = env.step("take key")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert f"did not return within {LIMIT:g} s" in info["error"] and info["action_valid"] is False
    assert info["task_id"] == "task-0" and "stopped responding" in observation
    assert needs_replacement(env) and needs_replacement(gym.wrappers.RecordEpisodeStatistics(env))
    again = env.step("look")  # the inner env is never called again
    assert again[3] is True and "reset() needs a new env" in again[4]["error"]
    with pytest.raises(EnvNeedsReplacement, match="make a new one"):
        env.reset(options={"task_id": "task-1"})
    env.close()  # returns although the inner step is still blocked


def test_errors_inside_a_step_are_not_timeouts() -> None:
    class Exploding(gym.Env):
        observation_space = action_space = gym.spaces.Discrete(2)

        def step(self, action: Any) -> Any:
            raise RuntimeError("backend exploded")

    env = StepTimeout(Exploding(), 5)
    with pytest.raises(RuntimeError, match="backend exploded"):
        env.step(0)
    assert env.broken is None


def test_eval_records_the_hung_episode_and_goes_on(tmp_path: Path) -> None:
    before = HangEnv.created
    result = evaluate(HANG_ID, "oracle", out_dir=tmp_path, env_kwargs={"hang_task": "task-1"},
                      step_timeout=LIMIT, progress=False)
    by_task = {r.task_id: r for r in result.records}
    assert sorted(by_task) == ["task-0", "task-1", "task-2", "task-3"]
    hung = by_task.pop("task-1")
    assert hung.failed and hung.truncated and not hung.won and "did not return within" in (hung.error or "")
    assert all(r.won and r.error is None for r in by_task.values())  # a fresh env served the rest
    assert HangEnv.created - before == 2
    assert result.summary["complete"] is True and result.summary["episodes"] == 4


def test_cli_step_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["eval", HANG_ID, "--agent", "oracle", "--out", str(out), "--no-progress", "--json",
                 "--step-timeout", str(LIMIT), "--env-kwargs", json.dumps({"hang_task": "task-2"})])
    assert code == 1  # the hung episode crashed: every result is written, and the exit status says so
    assert "1 episode(s) crashed" in capsys.readouterr().err
    lines = [json.loads(x) for x in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    errors = {line["task_id"]: line.get("error") for line in lines}
    assert len(lines) == 4 and "did not return within" in errors.pop("task-2")
    assert set(errors.values()) == {None}
    assert main(["eval", HANG_ID, "--out", str(tmp_path / "bad"), "--no-progress", "--step-timeout", "0"]) == 2
    assert "--step-timeout must be a positive number of seconds" in capsys.readouterr().err


def test_rollout_engine_truncates_the_hung_episode_and_replaces_its_env() -> None:
    engine = RolloutEngine(BoxBackend(), max_turns=4, step_timeout=LIMIT)
    kwargs = {"hang_task": "task-1"}
    first = engine.run_groups(HANG_ID, ["task-0", "task-1", "task-2"], env_kwargs=kwargs)
    assert [t.won for t in first] == [True, False, True]
    assert first[1].truncated and "did not return within" in (first[1].error or "")
    created = HangEnv.created
    second = engine.run_groups(HANG_ID, ["task-2", "task-0", "task-3"], env_kwargs=kwargs)
    assert HangEnv.created == created + 1  # only the hung env was made again
    assert [t.won for t in second] == [True, True, True] and all(t.error is None for t in second)
    engine.close()
    with pytest.raises(ValueError, match="step_timeout"):
        RolloutEngine(BoxBackend(), step_timeout=-2)

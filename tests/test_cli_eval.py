"""``agentgym eval`` end to end: oracle and random agents, both output files, their keys."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from agentgym_suite.cli import main
from agentgym_suite.registration import entry, missing_requirements

from evaluation.fake_env import register_fake_env

FAKE = register_fake_env()
SUMMARY_KEYS = {
    "success_rate", "mean_score", "mean_turns", "invalid_action_rate", "episodes", "pass@k", "pass^k", "k",
    "wall_time_s", "tokens_per_s", "env_id", "env_kwargs", "agent", "seed",
}
TURN_KEYS = {"index", "completion_text", "observation", "reward", "action_valid", "info", "thinking", "prompt",
             "prompt_text", "completion_tokens"}


def _outputs(out: Path) -> tuple[dict, list[dict]]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    return summary, lines


@pytest.mark.parametrize("agent", ["oracle", "random"])
def test_eval_writes_trajectories_and_summary(agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / agent
    code = main(["eval", FAKE, "--agent", agent, "--episodes", "3", "--k", "2", "--seed", "5", "--out", str(out),
                 "--max-turns", "4", "--env-kwargs", '{"n_tasks": 5}'])
    assert code == 0
    assert "success rate" in capsys.readouterr().out
    summary, lines = _outputs(out)
    assert SUMMARY_KEYS <= set(summary)
    assert summary["episodes"] == len(lines) == 6 and summary["k"] == 2
    assert summary["env_kwargs"] == {"n_tasks": 5} and summary["agent"] == agent and summary["seed"] == 5
    assert {(line["task_id"], line["attempt"]) for line in lines} == {(t, a) for t in {x["task_id"] for x in lines}
                                                                     for a in (0, 1)}
    for line in lines:
        assert 1 <= len(line["turns"]) <= 4
        assert TURN_KEYS <= set(line["turns"][0])
        assert "won" in line["turns"][-1]["info"] and line["error"] is None
    if agent == "oracle":
        assert summary["success_rate"] == 1.0 and summary["pass^k"] == 1.0
    won = [line["won"] for line in lines]
    assert summary["success_rate"] == pytest.approx(sum(won) / len(won))


def test_eval_rerun_skips_finished_episodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", FAKE, "--agent", "random", "--episodes", "2", "--out", str(tmp_path), "--no-progress", "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["episodes_run_now"] == 2 and second["episodes_run_now"] == 0
    assert second["success_rate"] == first["success_rate"]
    assert len((tmp_path / "trajectories.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env-kwargs", "{bad"], "not valid JSON"),
        (["--env-kwargs", "[1]"], "must be a JSON object"),
        (["--agent", "nobody"], "Unknown agent"),
        (["--k", "0"], "--k must be >= 1"),
    ],
)
def test_eval_bad_input_says_what_to_do(extra: list[str], message: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", FAKE, "--out", str(tmp_path / "o"), "--no-progress", *extra]) == 2
    assert message in capsys.readouterr().err


def test_eval_on_textworld(tmp_path: Path) -> None:
    import agentgym_suite  # noqa: F401

    if "TextWorld-v0" not in gym.registry or missing_requirements(entry("TextWorld-v0")):
        pytest.skip("TextWorld-v0 is not available in this install")
    for agent in ("oracle", "random"):
        out = tmp_path / agent
        code = main(["eval", "TextWorld-v0", "--agent", agent, "--episodes", "1", "--out", str(out),
                     "--max-turns", "8", "--env-kwargs", '{"n_games": 1}', "--no-progress"])
        assert code == 0
        summary, lines = _outputs(out)
        assert summary["episodes"] == 1 and lines[0]["task_id"] == "game-0" and lines[0]["error"] is None
        if agent == "oracle":
            assert summary["success_rate"] == 1.0


def test_env_workers_is_parsed_once_per_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentgym_suite.evaluation import runner
    from agentgym_suite.rollout import env_pool, workers
    from agentgym_suite.rollout.workers import EnvWorkers, parse_env_workers

    parses: list[object] = []

    def counting(value: object) -> EnvWorkers | None:
        if not isinstance(value, EnvWorkers) and value is not None:  # a parsed value passing through is no parse
            parses.append(value)
        return parse_env_workers(value)

    for module in (workers, runner, env_pool):
        monkeypatch.setattr(module, "parse_env_workers", counting)
    code = main(["eval", FAKE, "--agent", "oracle", "--episodes", "2", "--out", str(tmp_path / "out"),
                 "--env-workers", "1", "--env-kwargs", '{"n_tasks": 3}'])
    assert code == 0 and parses == ["1"]

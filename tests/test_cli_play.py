"""``agentgym play`` driven through stdin as a person would."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym

import agentgym_suite  # noqa: F401


def test_play_an_episode_to_the_end() -> None:
    env = gym.make("TextWorld-v0", n_games=1, challenge="tw-coin_collector")
    env.reset(options={"task_id": "game-0"})
    plan = env.unwrapped.oracle()
    env.close()
    stdin = "/actions\n/hint\n" + "\n".join(plan) + "\n"
    result = subprocess.run(
        [sys.executable, "-m", "agentgym_suite.cli", "play", "TextWorld-v0", "--task-id", "game-0",
         "--env-kwargs", '{"n_games": 1, "challenge": "tw-coin_collector"}'],
        input=stdin, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert plan[0] in result.stdout  # the hint
    assert "Episode over: won." in result.stdout


def test_play_rejects_bad_kwargs() -> None:
    result = subprocess.run([sys.executable, "-m", "agentgym_suite.cli", "play", "TextWorld-v0", "--env-kwargs", "{bad"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not valid JSON" in result.stderr
    result = subprocess.run([sys.executable, "-m", "agentgym_suite.cli", "play", "TextWorld-v0", "--env-kwargs", "[1]"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "must be a JSON object" in result.stderr

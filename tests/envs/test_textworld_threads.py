"""TextWorld envs reset in threads of one process (as ``agentgym serve`` sessions do): TextWorld's
game parser is not thread-safe, so concurrent game loads used to fail with IndexError."""

from __future__ import annotations

import threading

import gymnasium as gym
import pytest

import agentgym_suite  # noqa: F401

KWARGS = {"challenge": "tw-coin_collector", "n_games": 2}


@pytest.mark.timeout(300)
def test_concurrent_first_resets_in_threads_all_load_their_game() -> None:
    gym.make("TextWorld-v0", **KWARGS).close()  # the games exist before the race (as serve's start-up check does)
    envs = [gym.make("TextWorld-v0", **KWARGS) for _ in range(6)]
    start = threading.Barrier(len(envs))
    errors: list[str] = []
    tasks: list[str] = []

    def reset(env: gym.Env, seed: int) -> None:
        start.wait()
        try:
            for round_ in range(2):
                _, info = env.reset(seed=seed + round_)
                tasks.append(info["task_id"])
        except Exception as exc:  # collected: the assertion below names it
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=reset, args=(env, i)) for i, env in enumerate(envs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    for env in envs:
        env.close()
    assert errors == []
    assert len(tasks) == 12 and set(tasks) <= {"game-0", "game-1"}

"""``agentgym eval --env-workers N`` / ``--concurrency N`` play N episodes at once whatever the agent.

An agent that plays one env at a time (random, oracle, a user's own class) used to play every
episode after the previous one, so worker processes sat idle (ALFWorld: 1.02x with 2 workers).
Now it plays as N copies, each reset with its episode's seed, so records must equal inline ones.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.evaluation.runner import evaluate, parallel_width
from agentgym_suite.rollout.workers import parse_env_workers

from .fake_env import register_fake_env
from .test_runner import _content

FAKE = register_fake_env()
IN_FLIGHT = {"now": 0, "most": 0}
LOCK = threading.Lock()


class CountingAgent:
    """A user's own one-at-a-time agent: seeded random picks, and a count of how many of its copies
    are inside ``act`` at once (a short wait in each call stands for a model server's latency)."""

    name = "counting"

    def __init__(self) -> None:
        import numpy as np

        self._rng = np.random.default_rng(0)

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        import numpy as np

        self._rng = np.random.default_rng(seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        with LOCK:
            IN_FLIGHT["now"] += 1
            IN_FLIGHT["most"] = max(IN_FLIGHT["most"], IN_FLIGHT["now"])
        time.sleep(0.02)
        with LOCK:
            IN_FLIGHT["now"] -= 1
        choices = info["admissible_actions"]
        return str(choices[int(self._rng.integers(len(choices)))])


class UncopyableAgent(CountingAgent):
    """An agent holding something ``copy.deepcopy`` refuses (a lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def _run(tmp_path: Path, name: str, agent: Any, **settings: Any) -> tuple[list[dict[str, Any]], int]:
    IN_FLIGHT.update(now=0, most=0)
    out = tmp_path / name
    evaluate(FAKE, agent, out_dir=out, episodes=6, k=2, seed=4, max_turns=5, progress=False, **settings)
    # by episode: copies in their own lanes write each episode as it ends, not in plan order
    return sorted(_content(out / "trajectories.jsonl"), key=lambda r: r["traj_id"]), IN_FLIGHT["most"]


def test_parallel_width_follows_the_larger_of_batch_size_and_env_workers() -> None:
    def width(batch_size: int, setting: object) -> int:  # the value a command parsed once
        return parallel_width(batch_size, parse_env_workers(setting))

    assert width(1, None) == 1 and width(1, 1) == 1 and width(1, "inline") == 1
    assert width(1, 2) == 2 and width(1, "ray:3") == 3 and width(4, 2) == 4
    assert width(1, "ray") == 1  # as many actors as the cluster has CPUs: the batch size decides


def test_env_workers_play_a_users_agent_n_at_a_time_with_inline_results(tmp_path: Path) -> None:
    inline, alone = _run(tmp_path, "inline", CountingAgent(), env_workers=1)
    workers, together = _run(tmp_path, "workers", CountingAgent(), env_workers=2)
    assert alone == 1 and together == 2, (alone, together)
    assert workers == inline and len(inline) == 12
    plays = {tuple(turn["completion_text"] for turn in r["turns"]) for r in inline}
    assert len(plays) > 3  # each episode's seed drives its picks: a mixed-up seed would show


@pytest.mark.parametrize("agent", ["random", "oracle"])
def test_builtin_agents_with_env_workers_match_inline(tmp_path: Path, agent: str) -> None:
    inline, _ = _run(tmp_path, "inline", agent, env_workers=1)
    workers, _ = _run(tmp_path, "workers", agent, env_workers=2)
    assert workers == inline


def test_concurrency_plays_a_one_at_a_time_agent_n_at_a_time(tmp_path: Path) -> None:
    """``--concurrency N`` sets the batch size: N copies of the agent, their calls in flight together."""
    inline, _ = _run(tmp_path, "inline", CountingAgent())
    concurrent, together = _run(tmp_path, "concurrent", CountingAgent(), batch_size=3)
    assert together == 3 and concurrent == inline


def test_an_agent_that_cannot_be_copied_plays_one_at_a_time_and_says_so(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    inline, _ = _run(tmp_path, "inline", UncopyableAgent())
    with caplog.at_level(logging.WARNING, logger="agentgym_suite.evaluation.runner"):
        alone, most = _run(tmp_path, "alone", UncopyableAgent(), batch_size=2)
    assert most == 1 and alone == inline
    assert "cannot be copied" in caplog.text and "__deepcopy__" in caplog.text

"""Speed of the tool-calling envs: resets and steps per second under the oracle policy.

Usage::

    AGENTGYM_DATA=/path/to/data python benchmarks/tool_env_speed.py [--episodes 20]

Add an env by appending an ``(env id, kwargs)`` pair to ``CASES`` (kwargs ``None``: the env's
own ``fixture_kwargs``). Cases whose env is not installed or whose data is missing are
reported as skipped, not failed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator

import agentgym_suite.registration as registration

CASES: list[tuple[str, dict[str, Any] | None]] = [
    ("SyntheticTools-v0", {"seed": 0, "task_length": 3}),
    ("SyntheticTools-v0", {"seed": 0, "task_length": 8, "num_tools": 15, "distractors": 6}),
    ("Tau2-v0", {"domain": "mock"}),
    ("Tau2-v0", {"domain": "retail"}),
    ("Tau2-v0", {"domain": "airline"}),
    ("Tau2-v0", {"domain": "telecom"}),
    ("BFCL-v0", {"category": "base"}),
    ("BFCL-v0", {"category": "simple"}),
    ("VitaBench-v0", {"domain": "delivery"}),
    ("FinMCP-v0", None),  # generated samples: the official data cannot ship
]
"""(env id, make kwargs) pairs to time; append rows for further tool envs."""


def time_case(env_id: str, kwargs: dict[str, Any], episodes: int, max_steps: int = 60) -> dict[str, Any]:
    """Run ``episodes`` oracle episodes over the first task ids; return timings and the win rate."""
    env = gymnasium.make(env_id, **kwargs)
    ids = env.unwrapped.task_ids()[:episodes]
    reset_s = step_s = 0.0
    steps = wins = 0
    for task_id in ids:
        start = time.perf_counter()
        env.reset(options={"task_id": task_id})
        reset_s += time.perf_counter() - start
        done = truncated = False
        info: dict[str, Any] = {}
        n = 0
        while not (done or truncated) and n < max_steps:
            action = env.unwrapped.oracle()[0]
            start = time.perf_counter()
            _, _, done, truncated, info = env.step(action)
            step_s += time.perf_counter() - start
            n += 1
        steps += n
        wins += int(bool(info.get("won")))
    env.close()
    return {
        "episodes": len(ids),
        "reset_ms": 1000 * reset_s / max(len(ids), 1),
        "step_ms": 1000 * step_s / max(steps, 1),
        "steps_per_s": steps / step_s if step_s else float("inf"),
        "oracle_win_rate": wins / max(len(ids), 1),
    }


PARSE_SAMPLES = [
    'Let me look that up.\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W2378156"}}\n</tool_call>',
    '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call><tool_call>{"name": "b", "arguments": {"y": [1, 2]}}</tool_call>',
    '{"content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\\"q\\": 2}"}}]}',
    "<tool_call>{broken json</tool_call> and some text",
    "Your order has been cancelled. Anything else?",
]
"""A mix of well-formed, parallel, OpenAI-style, malformed and plain messages."""


def parse_throughput(seconds: float = 1.0) -> float:
    """Messages parsed per second by the shared tool-call parser."""
    from agentgym_suite.core.tool_calls import parse_tool_calls

    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for message in PARSE_SAMPLES:
            parse_tool_calls(message)
        count += len(PARSE_SAMPLES)
    return count / (time.perf_counter() - start)


def main() -> None:
    """Time every case and print one table row each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per case")
    args = parser.parse_args()
    registration.register_all()
    print(f"{'env':<20} {'kwargs':<55} {'eps':>4} {'reset ms':>9} {'step ms':>8} {'steps/s':>8} {'oracle win':>10}")
    for env_id, kwargs in CASES:
        shown = "fixture" if kwargs is None else ", ".join(f"{k}={v}" for k, v in kwargs.items())[:55]
        item = registration.entry(env_id)
        missing = registration.missing_requirements(item)
        if kwargs is None and registration.implemented(item):
            env_class = load_env_creator(item.entry_point)
            if env_class.fixture_replaces_data:
                missing = [m for m in missing if not m.startswith("data")]
            if not missing:
                kwargs = env_class.fixture_kwargs(Path(tempfile.mkdtemp(prefix="tool-env-speed-")))
        if missing or kwargs is None:
            print(f"{env_id:<20} {shown:<55} skipped: {'; '.join(missing)}")
            continue
        row = time_case(env_id, kwargs, args.episodes)
        print(f"{env_id:<20} {shown:<55} {row['episodes']:>4} {row['reset_ms']:>9.1f} {row['step_ms']:>8.2f} "
              f"{row['steps_per_s']:>8.0f} {row['oracle_win_rate']:>10.2f}")
    print(f"\ntool-call parser: {parse_throughput():,.0f} messages/s (mixed well-formed, parallel, OpenAI-style, malformed)")


if __name__ == "__main__":
    main()

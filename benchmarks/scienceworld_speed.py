"""ScienceWorld speed: the package's own env vs ``ScienceWorld-v0``, task loads, async workers.

Three measurements, printed as one table:

1. steps/s of the raw backend (``scienceworld.ScienceWorldEnv.step``, which also gathers its
   full info dict: valid actions, look, inventory) vs ours through ``gymnasium.make`` on the
   same action sequence (the task's gold path), with the ranked admissible list on and off;
   the ratio is ours / raw;
2. reset (task load) time, with and without the gold-path search;
3. total steps/s of 1 vs 2 async workers (``agentgym_suite.make_vec(..., asynchronous=True)``;
   target >= 1.6x with 2 workers on 2 free cores);
4. steps/s of ours with the JVM's own identity hashes instead of the deterministic ones the env
   starts it with (``DETERMINISTIC_JVM_OPTIONS``); the ratio is deterministic / default.

    python benchmarks/scienceworld_speed.py [--task find-living-thing/0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Callable

import gymnasium as gym

import agentgym_suite
from agentgym_suite.envs.scienceworld.env import ScienceWorldEnv
from ratios import report_ratio


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def gold_sequence(task_id: str) -> list[str]:
    """The gold path of ``task_id`` (one short-lived env of ours)."""
    env = ScienceWorldEnv(task=task_id.split("/")[0], split="all", max_admissible=None, gold_path=True)
    try:
        env.reset(options={"task_id": task_id})
        return env.oracle()
    finally:
        env.close()


def raw_backend(task_id: str, actions: list[str], repeats: int) -> tuple[float, float]:
    """(steps/s, seconds per load+reset) of the package's own ``ScienceWorldEnv``."""
    from scienceworld import ScienceWorldEnv as RawEnv

    name, variation = task_id.split("/")
    raw = RawEnv()
    steps, step_time, load_time = 0, 0.0, 0.0
    try:
        for _ in range(repeats):
            load_time += timed(lambda: (raw.load(name, int(variation), ""), raw.reset()))
            start = time.perf_counter()
            for action in actions:
                raw.step(action)
            step_time += time.perf_counter() - start
            steps += len(actions)
    finally:
        raw.close()
    return steps / step_time, load_time / repeats


def ours(task_id: str, actions: list[str], repeats: int, max_admissible: int | None) -> tuple[float, float, float]:
    """(steps/s, reset seconds, reset seconds with gold path) of ``gymnasium.make('ScienceWorld-v0')``."""
    name = task_id.split("/")[0]
    env = gym.make("ScienceWorld-v0", task=name, split="all", max_admissible=max_admissible)
    gold_env = ScienceWorldEnv(task=name, split="all", max_admissible=max_admissible, gold_path=True)
    steps, step_time, reset_time, gold_reset = 0, 0.0, 0.0, 0.0
    try:
        env.reset(options={"task_id": task_id})  # JVM start, not counted
        gold_env.reset(options={"task_id": task_id})
        for _ in range(repeats):
            reset_time += timed(lambda: env.reset(options={"task_id": task_id}))
            gold_reset += timed(lambda: gold_env.reset(options={"task_id": task_id}))
            start = time.perf_counter()
            for action in actions:
                env.step(action)
            step_time += time.perf_counter() - start
            steps += len(actions)
    finally:
        env.close()
        gold_env.close()
    return steps / step_time, reset_time / repeats, gold_reset / repeats


def vector(task_id: str, actions: list[str], repeats: int, n: int, max_admissible: int | None) -> float:
    """Total env steps/s of ``n`` async workers playing ``actions`` (all but the winning step)."""
    name = task_id.split("/")[0]
    envs = agentgym_suite.make_vec(
        "ScienceWorld-v0", n, asynchronous=True, task=name, split="all", max_admissible=max_admissible
    )
    playable = actions[:-1]  # stop short of the win so no sub-env autoresets mid-run
    try:
        envs.reset(options={"task_id": task_id})  # JVM starts, not counted
        steps, elapsed = 0, 0.0
        for _ in range(repeats):
            envs.reset(options={"task_id": task_id})
            start = time.perf_counter()
            for action in playable:
                envs.step(tuple([action] * n))
            elapsed += time.perf_counter() - start
            steps += n * len(playable)
    finally:
        envs.close()
    return steps / elapsed


def without_deterministic_hashes(measure: Callable[[], float]) -> float:
    """Run ``measure`` with JVMs started without the env's deterministic-hash options."""
    from agentgym_suite.envs.scienceworld import backend

    saved = backend.DETERMINISTIC_JVM_OPTIONS
    backend.DETERMINISTIC_JVM_OPTIONS = ()
    try:
        return measure()
    finally:
        backend.DETERMINISTIC_JVM_OPTIONS = saved


def main() -> None:
    """Run the three measurements and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="find-living-thing/0", help="task id <task-name>/<variation>")
    parser.add_argument("--repeats", type=int, default=3, help="episodes per measurement")
    parser.add_argument("--max-admissible", type=int, default=60, help="admissible list size for the 'on' rows")
    args = parser.parse_args()

    actions = gold_sequence(args.task)
    print(f"task {args.task}: {len(actions)} gold actions, {os.cpu_count()} CPUs, repeats {args.repeats}")
    raw_sps, raw_load = raw_backend(args.task, actions, args.repeats)
    on_sps, on_reset, gold_reset = ours(args.task, actions, args.repeats, args.max_admissible)
    off_sps, off_reset, _ = ours(args.task, actions, args.repeats, None)
    default_hash_sps = without_deterministic_hashes(lambda: ours(args.task, actions, args.repeats, args.max_admissible)[0])
    vec1 = vector(args.task, actions, args.repeats, 1, None)
    vec2 = vector(args.task, actions, args.repeats, 2, None)

    rows = [
        ("raw scienceworld.ScienceWorldEnv.step", f"{raw_sps:8.1f} steps/s", "1.00x"),
        (f"ours, admissible list ({args.max_admissible})", f"{on_sps:8.1f} steps/s", f"{on_sps / raw_sps:.2f}x"),
        ("ours, admissible list off", f"{off_sps:8.1f} steps/s", f"{off_sps / raw_sps:.2f}x"),
        ("ours, admissible list, JVM's own hashes", f"{default_hash_sps:8.1f} steps/s",
         f"deterministic / own: {on_sps / default_hash_sps:.2f}x"),
        ("raw load + reset", f"{raw_load:8.3f} s", ""),
        ("ours reset (no gold path)", f"{off_reset:8.3f} s", ""),
        ("ours reset (admissible list)", f"{on_reset:8.3f} s", ""),
        ("ours reset with gold path", f"{gold_reset:8.3f} s", ""),
        ("async, 1 worker (list off)", f"{vec1:8.1f} steps/s", "1.00x"),
        ("async, 2 workers (list off)", f"{vec2:8.1f} steps/s", f"{vec2 / vec1:.2f}x (target >= 1.6x)"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'value':>16}  ratio")
    for label, value, ratio in rows:
        print(f"{label:<{width}}  {value:>16}  {ratio}")
    report_ratio("ScienceWorld: ours (admissible list) / raw steps/s", on_sps / raw_sps, ">= 0.9x", "env overhead")
    report_ratio("ScienceWorld 2 async workers / 1", vec2 / vec1, ">= 1.6x", "vector scaling, Java-bound")
    report_ratio("ScienceWorld deterministic / own JVM hashes steps/s", on_sps / default_hash_sps, ">= 0.9x",
                 "cost of reproducible loads")


if __name__ == "__main__":
    main()

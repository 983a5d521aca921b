"""Steps per second and reset time of WebShop-v0 and SearchQA-v0 under their oracle actions.

Usage::

    AGENTGYM_DATA=../shared/data python benchmarks/webshop_searchqa_speed.py [--episodes 30]

WebShop runs on the official catalogue when ``$AGENTGYM_DATA/webshop/data`` holds it, else on
the synthetic catalogue (written to a temporary directory). SearchQA runs on both datasets with
the local BM25 retriever. Construction (catalogue load, index build) is timed separately from
resets and steps.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Callable

from agentgym_suite.core.data import data_dir
from agentgym_suite.core.text_env import TextEnv
from agentgym_suite.envs.searchqa import SearchQAEnv
from agentgym_suite.envs.webshop import WebShopEnv
from agentgym_suite.envs.webshop.synthetic import write_synthetic_catalogue


def measure(name: str, build: Callable[[], TextEnv], episodes: int) -> None:
    """Print construction time, mean reset time and oracle steps/s for one env."""
    start = time.perf_counter()
    env = build()
    built = time.perf_counter() - start
    ids = env.task_ids()[:episodes]
    reset_time = step_time = 0.0
    steps = wins = 0
    for task_id in ids:
        start = time.perf_counter()
        env.reset(options={"task_id": task_id})
        reset_time += time.perf_counter() - start
        for action in env.oracle():
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            step_time += time.perf_counter() - start
            steps += 1
            if terminated or truncated:
                wins += int(info["won"])
                break
    print(f"{name:32s} build {built * 1000:8.1f} ms | reset {reset_time / max(1, len(ids)) * 1000:6.2f} ms | "
          f"{steps / step_time if step_time else 0.0:8.1f} steps/s | oracle won {wins}/{len(ids)}")


def main() -> None:
    """Run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    args = parser.parse_args()
    official = data_dir() / "webshop" / "data"
    with tempfile.TemporaryDirectory() as tmp:
        if (official / "items_shuffle_1000.json").exists():
            measure("WebShop-v0 (official 1k)", lambda: WebShopEnv(data_dir=official), args.episodes)
        else:
            synthetic = write_synthetic_catalogue(Path(tmp) / "webshop")
            measure("WebShop-v0 (synthetic catalogue)", lambda: WebShopEnv(data_dir=synthetic), args.episodes)
    for dataset in ("hotpotqa", "musique"):
        measure(f"SearchQA-v0 ({dataset}, BM25)", lambda d=dataset: SearchQAEnv(dataset=d), args.episodes)


if __name__ == "__main__":
    main()

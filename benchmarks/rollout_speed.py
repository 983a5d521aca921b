"""Rollout throughput: batched (N envs, one generation call per turn) vs one env at a time.

Prints generated tokens per second of both ways and their ratio (target >= 3x with 8 envs on
CPU), the share of wall time spent outside generation in the batched run (target <= 10%),
and peak resident memory. Uses TextWorld-v0 when it is registered and usable, else a small
built-in fake env.

    python benchmarks/rollout_speed.py                 # tiny random model
    python benchmarks/rollout_speed.py --model default # embedded SmolLM2-135M-Instruct
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from typing import Any

import gymnasium as gym

import agentgym_suite  # noqa: F401  (registers env ids)
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.llm import SamplingParams, load_backend
from agentgym_suite.registration import entry, missing_requirements
from agentgym_suite.rollout import EpisodeSpec, RolloutEngine
from ratios import report_ratio


class LoopEnv(TextEnv):
    """A fake command env that never ends on its own (the turn budget ends it)."""

    def task_ids(self) -> list[str]:
        return [f"room-{i}" for i in range(16)]

    def oracle(self) -> list[str]:
        return ["look"]

    def _load_task(self, task_id: str) -> TaskStart:
        return TaskStart(f"You are in {task_id}. There is a door to the north.", "Find the exit.", ["look", "go north"])

    def _execute(self, command: str, parsed: Any) -> StepOutcome:
        return StepOutcome(f"After '{command[:40]}', nothing changes.", 0.0, 0.0, admissible_actions=["look", "go north"])


def make_envs(env_id: str, n: int) -> tuple[str, list[gym.Env]]:
    """``n`` envs of ``env_id`` if it can run here, else the fake env."""
    if env_id in gym.registry and not missing_requirements(entry(env_id)):
        return env_id, [gym.make(env_id) for _ in range(n)]
    return "LoopEnv (fake)", [LoopEnv() for _ in range(n)]


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB."""
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / (1024 * 1024) if sys.platform == "darwin" else usage / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="backend spec: tiny, default, hf:PATH…")
    parser.add_argument("--env", default="TextWorld-v0")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--mode", default="single", choices=["single", "chat"])
    args = parser.parse_args()

    backend = load_backend(args.model, device="cpu")
    label, envs = make_envs(args.env, args.envs)
    tasks = envs[0].unwrapped.task_ids()
    specs = [EpisodeSpec(tasks[i % len(tasks)], i, f"g{i}", str(i)) for i in range(args.envs)]
    # sampling at temperature 1 with eos forbidden would be ideal; random/small models rarely stop early,
    # and both runs use identical prompts and seeds so their token counts are comparable.
    sampling = SamplingParams(temperature=1.0, max_new_tokens=args.max_new_tokens, seed=0)
    engine = RolloutEngine(backend, mode=args.mode, sampling=sampling, max_turns=args.turns)
    engine.run(envs[:1], specs[:1])  # warm-up

    started = time.perf_counter()
    engine.run(envs, specs)
    batched = engine.stats
    batched_wall = time.perf_counter() - started

    seq_tokens, seq_gen, started = 0, 0.0, time.perf_counter()
    for env, spec in zip(envs, specs):
        engine.run([env], [spec])
        seq_tokens += engine.stats.completion_tokens
        seq_gen += engine.stats.generate_s
    seq_wall = time.perf_counter() - started

    batched_tps = batched.completion_tokens / batched_wall
    seq_tps = seq_tokens / seq_wall
    rows = [
        ("env", label, ""),
        ("model", args.model, ""),
        ("envs x turns", f"{args.envs} x {args.turns}", ""),
        ("tokens/s batched", f"{batched_tps:.1f}", f"{batched.completion_tokens} tokens in {batched_wall:.2f} s"),
        ("tokens/s one-at-a-time", f"{seq_tps:.1f}", f"{seq_tokens} tokens in {seq_wall:.2f} s"),
        ("speed-up (target >= 3x)", f"{batched_tps / seq_tps:.2f}x", ""),
        ("outside generation (target <= 10%)", f"{100 * batched.outside_generation:.1f}%",
         f"generation {batched.generate_s:.2f} s of {batched.wall_s:.2f} s"),
        ("peak RSS", f"{peak_rss_mb():.0f} MiB", ""),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>14}  {note}")
    report_ratio(f"batched / one-at-a-time tokens/s ({label}, {args.model})", batched_tps / seq_tps, ">= 3x",
                 f"{args.envs} envs")
    report_ratio(f"share of rollout wall time outside generation ({label})", batched.outside_generation, "<= 10%", "")


if __name__ == "__main__":
    main()

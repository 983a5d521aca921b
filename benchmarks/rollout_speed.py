"""Rollout throughput: batched (N envs, one generation call per turn) vs one env at a time.

What it measures: generated tokens per second of the same episodes (same envs, task ids,
seeds and sampling settings) played two ways by RolloutEngine — all N envs in lockstep with
one batched generation call per turn, and each env on its own — and their ratio (target
>= 3x with 8 envs on CPU); the share of the batched run's wall time spent outside
generation (env steps, prompt rendering, tokenising, records; target <= 10%); the mean
prompt length; and peak resident memory. Uses TextWorld-v0 when it is registered and
usable (a real single-mode prompt is ~1000 tokens of the tiny tokenizer), else a small
built-in fake env.

The two ways run in alternating rounds (``--repeats``) and the reported numbers are
medians, so a load change on a shared machine hits both alike. On CPU the prompt's prefill
is compute-bound and costs the same per token batched or not; batching shares the per-step
cost of decoding. The ratio therefore depends on the ratio of generated to prompt tokens
(``--max-new-tokens``) — read it together with the prompt length printed next to it.

    python benchmarks/rollout_speed.py                 # tiny random model
    python benchmarks/rollout_speed.py --model default # embedded SmolLM2-135M-Instruct
"""

from __future__ import annotations

import argparse
import resource
import statistics
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
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds of batched and one-at-a-time")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--prefill", default=None, choices=["auto", "ragged", "padded"],
                        help="transformers backend prefill (default: the backend's own, auto)")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    backend = load_backend(args.model, device="cpu")
    if args.prefill and hasattr(backend, "prefill"):
        backend.prefill = args.prefill
    label, envs = make_envs(args.env, args.envs)
    tasks = envs[0].unwrapped.task_ids()
    specs = [EpisodeSpec(tasks[i % len(tasks)], i, f"g{i}", str(i)) for i in range(args.envs)]
    # sampling at temperature 1 with eos forbidden would be ideal; random/small models rarely stop early,
    # and both runs use identical prompts and seeds so their token counts are comparable.
    sampling = SamplingParams(temperature=1.0, max_new_tokens=args.max_new_tokens, seed=0)
    engine = RolloutEngine(backend, mode=args.mode, sampling=sampling, max_turns=args.turns)
    engine.run(envs[:1], specs[:1])  # warm-up

    batched_tps, seq_tps, ratios, outside = [], [], [], []
    prompt_tokens: list[int] = []
    notes = ""
    for _ in range(args.repeats):
        started = time.perf_counter()
        trajectories = engine.run(envs, specs)
        batched = engine.stats
        batched_wall = time.perf_counter() - started
        prompt_tokens += [len(turn.prompt_ids) for t in trajectories for turn in t.turns]

        seq_tokens, started = 0, time.perf_counter()
        for env, spec in zip(envs, specs):
            engine.run([env], [spec])
            seq_tokens += engine.stats.completion_tokens
        seq_wall = time.perf_counter() - started

        batched_tps.append(batched.completion_tokens / batched_wall)
        seq_tps.append(seq_tokens / seq_wall)
        ratios.append(batched_tps[-1] / seq_tps[-1])
        outside.append(batched.outside_generation)
        notes = (f"last round: {batched.completion_tokens} tokens in {batched_wall:.2f} s batched, "
                 f"{seq_tokens} in {seq_wall:.2f} s one at a time")

    ratio, share = statistics.median(ratios), statistics.median(outside)
    mean_prompt = sum(prompt_tokens) / max(len(prompt_tokens), 1)
    rows = [
        ("env", label, ""),
        ("model", args.model, f"torch threads {_threads()}, prefill {getattr(backend, 'prefill', '-')}"),
        ("envs x turns", f"{args.envs} x {args.turns}", f"{args.repeats} rounds"),
        ("prompt tokens (mean)", f"{mean_prompt:.0f}", f"{args.max_new_tokens} new tokens at most per turn"),
        ("tokens/s batched", f"{statistics.median(batched_tps):.1f}", " ".join(f"{x:.1f}" for x in batched_tps)),
        ("tokens/s one-at-a-time", f"{statistics.median(seq_tps):.1f}", " ".join(f"{x:.1f}" for x in seq_tps)),
        ("speed-up (target >= 3x)", f"{ratio:.2f}x", " ".join(f"{x:.2f}" for x in ratios)),
        ("outside generation (target <= 10%)", f"{100 * share:.1f}%", " ".join(f"{100 * x:.1f}" for x in outside)),
        ("peak RSS", f"{peak_rss_mb():.0f} MiB", notes),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>14}  {note}")
    detail = f"{args.envs} envs, {mean_prompt:.0f}-token prompts, {args.max_new_tokens} new tokens"
    report_ratio(f"batched / one-at-a-time tokens/s ({label}, {args.model})", ratio, ">= 3x", detail)
    report_ratio(f"share of rollout wall time outside generation ({label}, {args.model})", share, "<= 10%", detail)


def _threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()

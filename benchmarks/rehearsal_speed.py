"""Speed of world rehearsal: episode wall time in the rehearsal env vs the real env.

The same oracle action sequences are played in each real tool env and replayed in
EnvACE-Rehearsal-v0 over it with a world model (default: the tiny random model), and the
table shows seconds per episode side by side, their ratio, simulated tool calls per episode
and tokens generated per simulated call. The tiny model never meets the output contract, so
its rehearsed episodes end at the first call; the cost per simulated call is the comparable
number.

Usage::

    AGENTGYM_DATA=/path/to/data python benchmarks/rehearsal_speed.py [--episodes 3] [--world-model tiny]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import agentgym_suite.registration as registration
from agentgym_suite.envs.rehearsal import RehearsalEnv
from ratios import report_ratio

CASES: list[tuple[str, dict[str, Any]]] = [
    ("SyntheticTools-v0", {"seed": 0, "num_tools": 5, "distractors": 0}),
    ("BFCL-v0", {"category": "simple"}),
    ("Tau2-v0", {"domain": "mock"}),
]
"""(base env id, kwargs) pairs; append rows for further tool envs."""


def oracle_actions(env: RehearsalEnv, task_id: str, limit: int = 30) -> tuple[list[str], float]:
    """Play the oracle in the real env; return its actions and the episode's wall time."""
    start = time.perf_counter()
    env.reset(seed=0, options={"task_id": task_id})
    plan, actions = list(env.oracle()), []
    for _ in range(limit):
        action = plan.pop(0) if plan else env.oracle()[0]
        actions.append(action)
        *_, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return actions, time.perf_counter() - start


def replay(env: RehearsalEnv, task_id: str, actions: list[str]) -> tuple[float, int, int]:
    """Replay ``actions`` in the rehearsal env; return (wall time, simulated calls, generated tokens)."""
    start = time.perf_counter()
    env.reset(seed=0, options={"task_id": task_id})
    calls = tokens = 0
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        gens = info["simulator_generations"]
        calls += len(gens)
        tokens += sum(len(g.completion_ids) for g in gens)
        if terminated or truncated:
            break
    return time.perf_counter() - start, calls, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--world-model", default="tiny")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-prompt-chars", type=int, default=2500, help="keeps the tiny model's prompts under its 4096 positions")
    args = parser.parse_args()
    from agentgym_suite.llm import load_backend

    backend = load_backend(args.world_model)
    rows = []
    for env_id, kwargs in CASES:
        missing = registration.missing_requirements(registration.entry(env_id))
        if missing:
            rows.append((env_id, "skipped: " + "; ".join(missing)))
            continue
        real = RehearsalEnv(base_env=env_id, base_env_kwargs=kwargs, world_model="real")
        sim = RehearsalEnv(base_env=env_id, base_env_kwargs=kwargs, world_model=backend,
                           sampling={"max_new_tokens": args.max_new_tokens}, max_prompt_chars=args.max_prompt_chars)
        real_s = sim_s = 0.0
        calls = tokens = 0
        for task_id in real.task_ids()[: args.episodes]:
            actions, seconds = oracle_actions(real, task_id)
            real_s += seconds
            s, c, t = replay(sim, task_id, actions)
            sim_s, calls, tokens = sim_s + s, calls + c, tokens + t
        n = args.episodes
        report_ratio(f"rehearsed / real episode time ({env_id}, {args.world_model})", sim_s / max(real_s, 1e-9), "-",
                     f"{tokens / max(calls, 1):.1f} tokens per simulated call")
        rows.append((env_id, f"{real_s / n * 1000:9.1f} ms", f"{sim_s / n * 1000:9.1f} ms", f"{sim_s / max(real_s, 1e-9):8.1f}x",
                     f"{calls / n:5.2f}", f"{tokens / max(calls, 1):7.1f}", f"{sim_s / max(calls, 1) * 1000:9.1f} ms"))
    header = ("base env", "real/ep", "rehearsed/ep", "ratio", "calls/ep", "tokens/call", "s/call")
    print(f"world model: {args.world_model}, {args.episodes} oracle episodes per env, max {args.max_new_tokens} tokens per call")
    print(" | ".join(f"{h:>14}" for h in header))
    for row in rows:
        print(" | ".join(f"{str(c):>14}" for c in row))


if __name__ == "__main__":
    main()

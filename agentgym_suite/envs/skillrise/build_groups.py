"""Write the shipped SkillRise group file of ALFWorld's training split.

``python -m agentgym_suite.envs.skillrise.build_groups [--split train] [--k 3] [--seed 0] [--out PATH]``

The released SkillRise groups carry each task's plan length from ALFRED's trajectory files
(``traj_data.json``), which the suite's ALFWorld data does not hold; the plan length here is
the length of the expert walkthrough each ``game.tw-pddl`` ships, the other expert plan of the
same task. Reads only the game files (no ALFWorld backend needed). The env is made through the
registry (``ALFWorld-v0``): benchmark packages do not import each other.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from agentgym_suite.envs.skillrise.groups import DATA_DIR, build_groups, write_groups


def task_type(task_id: str) -> str:
    """An ALFWorld task's type: the prefix of its task folder (``<type>-<object>-...``)."""
    return task_id.split("-", 1)[0]


def walkthrough_length(env: Any, task_id: str) -> int:
    """Commands in the expert walkthrough of ``task_id``'s game file (``env``: an ALFWorld env)."""
    return len(json.loads(env.game_file(task_id).read_text(encoding="utf-8")).get("walkthrough") or [])


def main(argv: list[str] | None = None) -> Path:
    """Build and write the group file; returns its path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    import agentgym_suite  # noqa: F401  (registers ALFWorld-v0)

    env = gym.make("ALFWorld-v0", split=args.split).unwrapped
    ids = env.task_ids()
    groups = build_groups({t: task_type(t) for t in ids}, lambda t: walkthrough_length(env, t), k=args.k,
                          seed=args.seed)
    out = args.out or DATA_DIR / f"alfworld_{args.split}_k{args.k}.json"
    write_groups(out, groups, env_id="ALFWorld-v0", split=args.split, tasks=len(ids), k=args.k, seed=args.seed,
                 plan_length="commands in the game file's expert walkthrough",
                 rule="per task type: sorted ids shuffled with random.Random(seed), cut into groups of k, a short last "
                      "group filled with the type's first tasks (padded), each group sorted by plan length")
    env.close()
    print(f"wrote {len(groups)} groups of {args.k} to {out}")
    return out


if __name__ == "__main__":
    main()

"""Trajectories of every training step as JSON lines, written so that they survive a kill.

``<dir>/step_000003.jsonl`` holds one line per episode of the generation batch made at
optimiser step 3 (``-rank1`` suffix for other processes). Each line is flushed and synced
as it is written. A step that is generated again after a resume replaces its file, so a
step interrupted half-way is not logged twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

from agentgym_suite.rollout.records import Trajectory


def trajectory_summary(traj: Trajectory) -> dict[str, Any]:
    """A JSON-ready summary of one episode with every turn's text (no token ids)."""
    return {
        "group": traj.group_id,
        "traj": traj.traj_id,
        "task_id": traj.task_id,
        "seed": traj.seed,
        "task": traj.task,
        "return": traj.episode_return,
        "won": traj.won,
        "score": traj.score,
        "truncated": traj.truncated,
        "error": traj.error,
        "error_stage": traj.error_stage,
        "turns": [
            {
                "role": t.role,
                "position": t.position,
                "observation": t.state,
                "action": t.completion_text,
                "reward": t.reward,
                "valid": t.action_valid,
                "prompt_tokens": len(t.prompt_ids),
                "completion_tokens": len(t.completion_ids),
                "finish_reason": t.finish_reason,
                "role_generations": len(t.role_generations),
                # asynchronous rollouts: the policy version that generated the turn
                **({"policy_version": t.policy_version} if t.policy_version is not None else {}),
            }
            for t in traj.turns
        ],
    }


class TrajectoryLog:
    """Writes one JSONL file per step."""

    def __init__(self, directory: str | Path, rank: int = 0) -> None:
        self.directory = Path(directory)
        self.rank = rank

    def path(self, step: int) -> Path:
        """File of ``step``."""
        suffix = "" if self.rank == 0 else f"-rank{self.rank}"
        return self.directory / f"step_{step:06d}{suffix}.jsonl"

    def write_step(self, step: int, episodes: Sequence[Trajectory]) -> Path:
        """Write the episodes of ``step`` (replacing a partial file from an interrupted run)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(step)
        with path.open("w", encoding="utf-8") as fh:
            for ep in episodes:
                fh.write(json.dumps({"step": step, **trajectory_summary(ep)}, ensure_ascii=False, default=str) + "\n")
                fh.flush()
            os.fsync(fh.fileno())
        return path


def read_step(path: str | Path) -> list[dict]:
    """The episodes logged in one step file (a torn last line from a kill is skipped)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out

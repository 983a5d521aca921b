"""Rollout records: :class:`Turn` and :class:`Trajectory`, JSONL files and ``datasets`` rows.

Token bookkeeping differs by prompt mode:

* ``single`` — every turn has its own full prompt: ``Turn.prompt_ids`` is the whole prompt
  the model saw and ``Turn.completion_ids`` what it generated. The trajectory-level token
  fields stay empty.
* ``chat`` — one growing token sequence per episode: ``Trajectory.token_ids`` holds the first
  prompt, then each generation exactly as sampled, then the environment's reply tokens.
  ``token_mask`` is 1 on model tokens and 0 on prompt/environment tokens, ``token_logprobs``
  is the sampling log-prob on model tokens (0.0 elsewhere), and ``turn_spans[k]`` is the
  ``[start, end)`` slice of turn ``k``'s generation. ``Turn.prompt_ids`` then holds only the
  tokens added before that turn (the first prompt, or the environment's reply).

  An env that renders its own prompts (``info["prompt_messages"]``, e.g. SkillRise trials)
  is played like ``single`` even in ``chat`` mode: each turn has its whole prompt.

Trainer fields: ``Turn.state`` is the raw observation the action answers (the anchor state),
``Turn.role``/``Turn.position`` the role and task position the env reported for that prompt
(SkillRise), ``Turn.oracle`` the env's oracle at that state (when the engine records it: the
teacher's privileged text) and ``Turn.simulator_generations`` the world model's generations
of the step (rehearsal envs).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from agentgym_suite.core.simulator_generation import SimulatorGeneration

ENV_REPORTED = "env reported: "
"""Prefix of ``Trajectory.error`` when the env itself put an ``error`` in its info (other errors
start with the failed stage: ``reset failed:``, ``step failed:``, ``generate failed:``, ...)."""

INFO_SUBSET = ("task_id", "won", "score", "action_valid", "turn", "invalid_reason", "error")
"""``info`` keys copied into each turn record (when present)."""


@dataclass
class Turn:
    """One agent turn: the prompt, the generation, and what the env did with it."""

    index: int
    prompt_text: str
    completion_text: str
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    role: str = "agent"
    reward: float = 0.0
    action_valid: bool = True
    observation: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    finish_reason: str = "stop"
    state: str = ""
    """Raw observation the action answers (no history): GiGPO's anchor state."""
    position: int = 0
    """Task position inside a multi-task trial (``info["position"]`` of the prompt state)."""
    oracle: list[str] | None = None
    """The env's oracle from the prompt state (``RolloutEngine(record_oracle=True)``)."""
    simulator_generations: list[SimulatorGeneration] = field(default_factory=list)
    """``info["simulator_generations"]`` of the step (rehearsal envs)."""

    @property
    def done(self) -> bool:
        """The episode ended after this turn."""
        return self.terminated or self.truncated


@dataclass
class Trajectory:
    """One episode in one env, with everything a trainer or an evaluator needs."""

    task_id: str
    group_id: str
    env_id: str
    seed: int | None
    traj_id: str = ""
    mode: str = "single"
    turns: list[Turn] = field(default_factory=list)
    episode_return: float = 0.0
    won: bool = False
    score: float = 0.0
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    initial_observation: str = ""
    token_ids: list[int] = field(default_factory=list)
    token_mask: list[int] = field(default_factory=list)
    token_logprobs: list[float] = field(default_factory=list)
    prompt_length: int = 0
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    task: str = ""
    """Task text from the reset info."""
    reset_info: dict[str, Any] = field(default_factory=dict)
    """The ``info_keys`` subset of the reset info."""
    position_rewards: dict[int, float] = field(default_factory=dict)
    """Multi-task trials: reward of the task at each position (``info["position_rewards"]``)."""

    @property
    def num_turns(self) -> int:
        """Number of agent turns taken."""
        return len(self.turns)

    @property
    def failed(self) -> bool:
        """True when the episode ended on an error (env crash or backend failure)."""
        return self.error is not None

    @property
    def broken(self) -> bool:
        """True when the episode has no outcome the env judged, so nothing to learn from: the
        engine caught a failure (reset, step, generation, tokenising) or the env reported an
        error without terminating (a step timeout, a crashed simulator). An env that *terminates*
        an episode with an error (a malformed tool call under ``end_on_tool_error``) has judged
        the agent's play: failed, but not broken."""
        if self.error is None:
            return False
        return not self.error.startswith(ENV_REPORTED) or not self.terminated

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (inverse of :meth:`from_dict`)."""
        data = asdict(self)
        data["turn_spans"] = [list(span) for span in self.turn_spans]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trajectory":
        """Rebuild a trajectory from :meth:`to_dict` output (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        turn_keys = {f.name for f in fields(Turn)}
        values = {k: v for k, v in data.items() if k in known}
        values["turns"] = [_turn_from_dict(t, turn_keys) for t in data.get("turns", [])]
        values["turn_spans"] = [tuple(span) for span in data.get("turn_spans", [])]
        values["position_rewards"] = {int(k): float(v) for k, v in (data.get("position_rewards") or {}).items()}
        return cls(**values)

    @property
    def invalid_count(self) -> int:
        """Number of turns whose action was invalid."""
        return sum(not t.action_valid for t in self.turns)


def _turn_from_dict(data: dict[str, Any], keys: set[str]) -> Turn:
    values = {k: v for k, v in data.items() if k in keys}
    values["simulator_generations"] = [SimulatorGeneration.from_dict(g) for g in data.get("simulator_generations") or []]
    return Turn(**values)


def info_subset(info: dict[str, Any], keys: Iterable[str] = INFO_SUBSET) -> dict[str, Any]:
    """The JSON-friendly part of ``info`` worth keeping in a record."""
    out: dict[str, Any] = {}
    for key in keys:
        if key in info:
            value = info[key]
            out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return out


class TrajectoryWriter:
    """Append trajectories to a JSONL file, one line each, flushed as soon as written.

    Usable as a context manager. A crash mid-run loses at most the trajectory being written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")

    def write(self, trajectory: Trajectory) -> None:
        """Append one trajectory and flush."""
        if self._file is None:
            raise ValueError(f"TrajectoryWriter for {self.path} is closed; open a new one to append.")
        self._file.write(json.dumps(trajectory.to_dict(), ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "TrajectoryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> None:
    """Append ``trajectories`` to the JSONL file at ``path``."""
    with TrajectoryWriter(path) as writer:
        for trajectory in trajectories:
            writer.write(trajectory)


def iter_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file; a corrupt line raises ValueError naming it."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield Trajectory.from_dict(json.loads(line))
            except (json.JSONDecodeError, TypeError) as exc:
                raise ValueError(f"{path}:{number} is not a trajectory record ({exc}); remove or repair that line.") from None


def read_trajectories(path: str | Path) -> list[Trajectory]:
    """All trajectories of a JSONL file."""
    return list(iter_trajectories(path))


def turn_rows(trajectories: Iterable[Trajectory]) -> list[dict[str, Any]]:
    """One row per agent turn (the verl-agent per-turn layout)."""
    rows = []
    for traj in trajectories:
        for turn in traj.turns:
            rows.append({
                "traj_id": traj.traj_id, "group_id": traj.group_id, "task_id": traj.task_id, "env_id": traj.env_id,
                "seed": traj.seed, "turn": turn.index, "role": turn.role, "prompt": turn.prompt_text,
                "prompt_ids": turn.prompt_ids, "completion": turn.completion_text, "completion_ids": turn.completion_ids,
                "logprobs": turn.logprobs, "reward": float(turn.reward), "action_valid": bool(turn.action_valid),
                "observation": turn.observation, "done": turn.done, "episode_return": float(traj.episode_return),
                "won": bool(traj.won), "score": float(traj.score), "error": traj.error or "",
            })
    return rows


def trajectory_rows(trajectories: Iterable[Trajectory]) -> list[dict[str, Any]]:
    """One row per episode with the whole token sequence and its model-token mask."""
    return [{
        "traj_id": t.traj_id, "group_id": t.group_id, "task_id": t.task_id, "env_id": t.env_id, "seed": t.seed,
        "mode": t.mode, "token_ids": t.token_ids, "token_mask": t.token_mask, "token_logprobs": t.token_logprobs,
        "prompt_length": t.prompt_length, "turn_spans": [list(s) for s in t.turn_spans],
        "rewards": [float(turn.reward) for turn in t.turns], "num_turns": t.num_turns,
        "episode_return": float(t.episode_return), "won": bool(t.won), "score": float(t.score), "error": t.error or "",
    } for t in trajectories]


def to_dataset(trajectories: Iterable[Trajectory], layout: str = "turn") -> Any:
    """A Hugging Face ``datasets.Dataset``: ``layout="turn"`` (one row per turn) or ``"trajectory"``."""
    from datasets import Dataset

    if layout == "turn":
        rows = turn_rows(trajectories)
    elif layout == "trajectory":
        rows = trajectory_rows(trajectories)
    else:
        raise ValueError(f"layout={layout!r}; choose 'turn' or 'trajectory'.")
    if not rows:
        raise ValueError("no rows to convert: the trajectories have no turns.")
    return Dataset.from_list(rows)

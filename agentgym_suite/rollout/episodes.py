"""The small types the rollout engine and its policies share: which episode to play, the state of a
running one, and what a policy answers for it each turn."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from agentgym_suite.rollout.records import Trajectory, Turn

MAX_ERROR_CHARS = 4_000
"""Error messages (:func:`describe_error`) are cut to this many characters."""


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode an env plays.

    Attributes:
        task_id: the task (None: the env's seeded pick).
        seed: the reset seed; an agent policy also resets the agent with it.
        group_id: episodes of one group share task and seed (GRPO groups; an evaluation's task).
        traj_id: the episode's id within the run.
        attempt: which try at the task this is (the member's index in its group; an
            evaluation's attempt index, part of its resume key).
    """

    task_id: str | None
    seed: int | None
    group_id: str
    traj_id: str = ""
    attempt: int = 0


@dataclass(eq=False)
class LiveEpisode:
    """An episode while the engine plays it: its env, record and the state the next action answers."""

    env: gym.Env
    spec: EpisodeSpec
    trajectory: Trajectory
    observation: Any = ""
    """The observation the next action answers, as the env returned it."""
    info: dict[str, Any] = field(default_factory=dict)
    """``info`` of that state."""
    state: str = ""
    """Raw observation of that state (``info["raw_observation"]`` when the env renders its prompts)."""
    done: bool = False
    context: Any = None
    """The policy's own per-episode state (prompt history, token sequence)."""
    oracle: list[str] | None = None
    """``env.unwrapped.oracle()`` at that state, when the engine records oracles."""


@dataclass(frozen=True)
class Failure:
    """Why a policy could not serve an episode: a stage of ``ERROR_STAGES`` and a message."""

    stage: str
    message: str


@dataclass
class Decision:
    """A policy's answer for one episode in one turn.

    Attributes:
        action: what is passed to ``env.step`` (the model's raw text, or what the agent returned).
        turn: the turn record so far: prompt, completion text (the action as text) and what the
            policy knows of how it was made; the engine adds what the env did with it.
    """

    action: Any
    turn: Turn


def describe_error(exc: BaseException) -> str:
    """``"ExceptionType: message"`` followed by the innermost traceback frames, cut to a readable size.

    An exception raised in an env worker carries this text from where it was raised
    (``remote_description``, see :func:`~agentgym_suite.rollout.workers.calls.portable_error`).
    """
    remote = getattr(exc, "remote_description", None)
    if isinstance(remote, str):
        return remote[:MAX_ERROR_CHARS]
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = f"{type(exc).__name__}: {exc}\n" + "".join(frames[-3:])
    return text[:MAX_ERROR_CHARS]

"""The episode record an evaluation writes: one JSON object per episode, every turn included.

Each line of ``trajectories.jsonl`` is :meth:`EpisodeRecord.to_dict`. An episode is keyed by
``task_id`` and ``attempt`` (``key``), which is what a resumed run uses to skip finished work.
Records hold text only (no token ids): they are for scoring, reading and the viewer.

Each line is also a valid :class:`agentgym_suite.rollout.records.Trajectory` record: it carries
``env_id``, ``group_id``, ``traj_id``, ``episode_return`` and, per turn, ``index`` (0-based),
``prompt_text`` and ``completion_text``, so ``rollout.read_trajectories`` (and ``to_dataset``)
read an evaluation's file as it is. Conversely :meth:`EpisodeRecord.from_dict` reads rollout
trajectory lines, so the viewer shows rollout dumps too.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

RECORD_VERSION = 1
"""Bump when the record layout changes incompatibly."""

MAX_INFO_TEXT = 2_000
"""String values of recorded info entries are cut to this many characters."""

SKIPPED_INFO_KEYS = frozenset(
    {"task", "task_id", "turn", "admissible_actions", "tools", "privileged", "messages", "raw_observation"}
)
"""Info keys not copied into a turn record: repeated per turn, bulky, or privileged."""

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def episode_key(task_id: str, attempt: int) -> str:
    """The resume key of an episode: task id and attempt index."""
    return f"{task_id}#{attempt}"


def info_subset(info: dict[str, Any]) -> dict[str, Any]:
    """The JSON-friendly scalar entries of an env ``info`` worth keeping per turn.

    Keeps ``won``, ``score``, ``action_valid``, ``invalid_reason``, ``error`` and any other
    str/int/float/bool/None entry; drops lists, dicts and the keys in :data:`SKIPPED_INFO_KEYS`.
    """
    kept: dict[str, Any] = {}
    for key, value in info.items():
        if key in SKIPPED_INFO_KEYS or not isinstance(key, str):
            continue
        if isinstance(value, str):
            kept[key] = value[:MAX_INFO_TEXT]
        elif value is None or isinstance(value, (bool, int, float)):
            kept[key] = value
    return kept


def extract_thinking(action: str) -> str | None:
    """The content of the ``<think>…</think>`` blocks of an action, or None when there are none."""
    if not isinstance(action, str):
        return None
    parts = [m.strip() for m in _THINK.findall(action)]
    return "\n\n".join(parts) if parts else None


@dataclass
class TurnRecord:
    """One agent action and what the env answered.

    Attributes:
        turn: 1-based index of the action in the episode.
        action: the raw text the agent produced.
        observation: the env's observation after the action.
        reward: the per-step reward.
        action_valid: the env accepted the action as well-formed.
        thinking: the agent's reasoning (its ``<think>`` block or what the agent reported).
        prompt: the prompt the model saw, when the agent reports it.
        info: a scalar subset of the env's ``info`` (see :func:`info_subset`).
        completion_tokens: tokens the agent generated for this action, when reported.
    """

    turn: int
    action: str
    observation: str
    reward: float
    action_valid: bool
    thinking: str | None = None
    prompt: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    completion_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict that is also a rollout ``Turn`` record.

        A text prompt is stored once, as ``prompt_text``; a chat prompt (message list) as ``prompt``.
        """
        data = asdict(self)
        text_prompt = isinstance(self.prompt, str)
        data["prompt"] = None if text_prompt else self.prompt
        data["index"] = self.turn - 1
        data["prompt_text"] = self.prompt if text_prompt else ""
        data["completion_text"] = self.action
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TurnRecord:
        """Rebuild a turn from :meth:`to_dict` output or from a rollout ``Turn`` dict."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        if "turn" not in values and "index" in data:
            values["turn"] = int(data["index"]) + 1
        values.setdefault("action", data.get("completion_text", ""))
        if not values.get("prompt") and data.get("prompt_text"):
            values["prompt"] = data["prompt_text"]
        values.setdefault("observation", "")
        values.setdefault("reward", 0.0)
        values.setdefault("action_valid", True)
        return cls(**values)


@dataclass
class EpisodeRecord:
    """One evaluated episode.

    Attributes:
        task_id: the env's task id.
        attempt: 0-based attempt index for this task (``k`` attempts per task).
        seed: the seed the env and agent were reset with.
        env_id: the env id the episode ran in.
        task: the task instruction.
        task_type: ``info["task_type"]`` when the env reports one.
        initial_observation: the observation returned by ``reset``.
        turns: every turn, in order.
        won: the task was solved.
        score: the final normalised score in [0, 1].
        total_reward: sum of per-step rewards.
        terminated: the env ended the episode (won or lost for good).
        truncated: the turn budget ran out.
        error: ``"ExceptionType: message"`` when the env or agent crashed, else None.
        wall_s: wall-clock seconds for the episode.
        agent_s: seconds spent inside the agent's ``act``.
        completion_tokens: total tokens generated, when the agent reports them.
    """

    task_id: str
    attempt: int
    seed: int | None = None
    env_id: str = ""
    task: str = ""
    task_type: str | None = None
    initial_observation: str = ""
    turns: list[TurnRecord] = field(default_factory=list)
    won: bool = False
    score: float = 0.0
    total_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    wall_s: float = 0.0
    agent_s: float = 0.0
    completion_tokens: int | None = None

    @property
    def key(self) -> str:
        """Resume key (see :func:`episode_key`)."""
        return episode_key(self.task_id, self.attempt)

    @property
    def failed(self) -> bool:
        """True when the episode ended in a crash."""
        return self.error is not None

    @property
    def num_turns(self) -> int:
        """Number of actions taken."""
        return len(self.turns)

    @property
    def invalid_actions(self) -> int:
        """Number of actions the env marked invalid."""
        return sum(1 for t in self.turns if not t.action_valid)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (one line of ``trajectories.jsonl``; also a rollout ``Trajectory``)."""
        data = asdict(self)
        data["turns"] = [turn.to_dict() for turn in self.turns]
        data["key"] = self.key
        data["num_turns"] = self.num_turns
        data["version"] = RECORD_VERSION
        data["group_id"] = self.task_id
        data["traj_id"] = self.key
        data["episode_return"] = self.total_reward
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, attempt: int | None = None) -> EpisodeRecord:
        """Rebuild a record from :meth:`to_dict` output or a rollout ``Trajectory`` dict.

        ``attempt`` is used when the dict has none (rollout records); unknown keys are ignored.
        """
        if not isinstance(data, dict) or "task_id" not in data:
            raise ValueError("an episode record needs at least 'task_id'")
        if "attempt" not in data and attempt is None:
            raise ValueError("an episode record needs an 'attempt' index")
        turns = [TurnRecord.from_dict(t) for t in data.get("turns", [])]
        names = {f.name for f in fields(cls)} - {"turns"}
        values = {k: v for k, v in data.items() if k in names}
        values["task_id"] = str(values["task_id"])
        values["attempt"] = int(values.get("attempt", attempt))
        if "total_reward" not in values and isinstance(data.get("episode_return"), (int, float)):
            values["total_reward"] = float(data["episode_return"])
        return cls(turns=turns, **values)

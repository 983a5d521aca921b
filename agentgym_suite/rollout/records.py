"""The record of an episode: :class:`Turn` and :class:`Trajectory`, JSONL files and ``datasets`` rows.

One record type serves every consumer: the rollout engine writes it whatever its policy (a
generation backend or an agent), the trainer turns it into rows, and an evaluation keeps one
per line of its ``trajectories.jsonl`` (resumed by :attr:`Trajectory.key`, shown by the viewer).

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

An agent policy reports text, not tokens: its turns carry ``completion_text`` (the action),
the prompt it reported (``prompt_text``, or ``prompt`` when it is a list of chat messages),
``thinking`` and ``completion_tokens``, and no token ids. A model behind a server adds what
went over the wire: the ``request`` (compacted, see :mod:`~agentgym_suite.rollout.request_log`),
``usage``, the server's ``finish_reason`` and ``tool_calls``, and ``context_trimmed`` when old
turns were left out of the prompt.

Trainer fields: ``Turn.state`` is the raw observation the action answers (the anchor state),
``Turn.role``/``Turn.position`` the role and task position the env reported for that prompt
(SkillRise), ``Turn.oracle`` the env's oracle at that state (when the engine records it: the
teacher's privileged text) and ``Turn.role_generations`` the generations a model made inside
the env while playing a role of it (:mod:`~agentgym_suite.core.role_generation`).

A failed episode has ``error`` (what went wrong) and ``error_stage`` (where: one of
:data:`ERROR_STAGES`). Files written before ``error_stage`` existed, whose ``error`` began with
the stage (``"step failed: ..."``, ``"env reported: ..."``), and evaluation files of the
earlier episode-record layout are read by the same :meth:`Trajectory.from_dict`. A package whose
records once held data under keys of its own declares how to bring them to this layout
(:mod:`~agentgym_suite.rollout.record_upgrades`); the loader runs those upgrades after its own.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from agentgym_suite.core.role_generation import ROLE_GENERATIONS, RoleGeneration
from agentgym_suite.rollout.record_upgrades import upgraded_record

RECORD_VERSION = 2
"""Layout version written in each JSONL line (1: the earlier evaluation episode record)."""

ERROR_STAGES: dict[str, str] = {
    "reset": "env.reset raised: the episode never started.",
    "agent": "the agent raised in reset/act (reset_batch/act_batch/keep_slots for a batched agent).",
    "generate": "the generation backend failed on this prompt, or returned malformed output.",
    "step": "env.step raised on the action (the action is recorded as the last turn).",
    "tokenise": "the env's reply could not be added to the episode's token sequence (chat mode), or the "
                "opening prompt could not be tokenised.",
    "env": "the env reported an error in info['error'] (a crashed backend program, a step timeout, a failed tool "
           "call under end_on_tool_error).",
}
"""``Trajectory.error_stage`` values and what each means."""

ENV_ERROR_STAGES = ("reset", "step", "env")
"""Stages after which the env's state cannot be trusted: an owner of reused envs replaces it."""

INFO_SUBSET = ("task_id", "won", "score", "action_valid", "turn", "invalid_reason", "error")
"""``info`` keys copied into each turn record by default (when present)."""

MAX_INFO_TEXT = 2_000
"""With ``info_subset(info, None)``, string values are cut to this many characters."""

SKIPPED_INFO_KEYS = frozenset(
    {"task", "task_id", "turn", "admissible_actions", "tools", "privileged", "messages", "raw_observation"}
)
"""Keys ``info_subset(info, None)`` leaves out: repeated per turn, bulky, or privileged."""

_LEGACY_PREFIXES = (("reset failed: ", "reset"), ("agent failed: ", "agent"), ("generate failed: ", "generate"),
                    ("step failed: ", "step"), ("tokenise failed: ", "tokenise"), ("env reported: ", "env"))


def episode_key(task_id: str, attempt: int) -> str:
    """The key of an episode within an evaluation: task id and attempt index (``"task#2"``)."""
    return f"{task_id}#{attempt}"


@dataclass
class Turn:
    """One turn: the prompt, the action the policy chose, and what the env did with it."""

    index: int
    prompt_text: str
    completion_text: str
    """The action: the model's raw text (or the agent's action)."""
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
    role_generations: list[RoleGeneration] = field(default_factory=list)
    """``info["role_generations"]`` of the step: generations a model made inside the env while playing a
    role of it (:mod:`~agentgym_suite.core.role_generation`)."""
    prompt: list[dict[str, Any]] | None = None
    """The prompt as chat messages, when an agent reported it that way (else in ``prompt_text``)."""
    thinking: str | None = None
    """The reasoning behind the action: what the agent reported, else the action's ``<think>`` blocks."""
    completion_tokens: int | None = None
    """Tokens generated for the action, when known (the token ids, or the server's ``usage``)."""
    request: dict[str, Any] | None = None
    """The request sent to a server for this action (messages, tools, sampling fields), with what
    the episode sent before as references (:mod:`~agentgym_suite.rollout.request_log`)."""
    usage: dict[str, Any] | None = None
    """The server's token counts for the request (``prompt_tokens``, ``completion_tokens``…)."""
    tool_calls: list[dict[str, Any]] | None = None
    """The tool calls as the server returned them (OpenAI format, with the server's call ids)."""
    context_trimmed: list[int] | None = None
    """Indices of earlier turns whose action and answer were left out of this prompt so that it
    fits the context window (oldest first; the system prompt and the task are always kept)."""
    policy_version: int | None = None
    """The version of the trained policy (its optimizer steps) whose weights generated this turn,
    when a trainer's asynchronous rollouts tagged it; None otherwise."""

    @property
    def done(self) -> bool:
        """The episode ended after this turn."""
        return self.terminated or self.truncated


@dataclass
class Trajectory:
    """One episode in one env, with everything a trainer or an evaluator needs."""

    task_id: str
    group_id: str = ""
    env_id: str = ""
    seed: int | None = None
    traj_id: str = ""
    mode: str = "single"
    """``single`` or ``chat`` (a generation backend's prompt mode), or ``agent`` (an agent kept its prompts)."""
    turns: list[Turn] = field(default_factory=list)
    episode_return: float = 0.0
    won: bool = False
    score: float = 0.0
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    """What went wrong, when the episode failed (see ``error_stage``)."""
    error_stage: str | None = None
    """Where it went wrong: one of :data:`ERROR_STAGES` (None while ``error`` is None)."""
    initial_observation: str = ""
    token_ids: list[int] = field(default_factory=list)
    token_mask: list[int] = field(default_factory=list)
    token_logprobs: list[float] = field(default_factory=list)
    prompt_length: int = 0
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    task: str = ""
    """Task text from the reset info."""
    task_type: str | None = None
    """``info["task_type"]`` of the reset, when the env reports one."""
    reset_info: dict[str, Any] = field(default_factory=dict)
    """The ``info_keys`` subset of the reset info."""
    position_rewards: dict[int, float] = field(default_factory=dict)
    """Multi-task trials: reward of the task at each position (``info["position_rewards"]``)."""
    attempt: int = 0
    """Which try at the task this is (the k-th member of its group; an evaluation's attempt index)."""
    wall_s: float = 0.0
    """This episode's share of the wall time of the run that played it (summed shares are the run's time)."""
    policy_s: float = 0.0
    """Seconds the policy spent choosing this episode's actions (its share of each batched call)."""
    completion_tokens: int | None = None
    """Tokens generated over the episode, when the policy reports them."""

    @property
    def key(self) -> str:
        """Task id and attempt (:func:`episode_key`): what a resumed evaluation skips."""
        return episode_key(self.task_id, self.attempt)

    @property
    def num_turns(self) -> int:
        """Number of agent turns taken."""
        return len(self.turns)

    @property
    def failed(self) -> bool:
        """True when the episode ended on an error (env crash, env-reported error, policy failure)."""
        return self.error is not None

    @property
    def broken(self) -> bool:
        """True when the episode has no outcome the env judged, so nothing to learn from: the
        engine caught a failure (reset, agent, generate, step, tokenise) or the env reported an
        error without terminating (a step timeout, a crashed backend). An env that *terminates*
        an episode with an error (a malformed tool call under ``end_on_tool_error``) has judged
        the agent's play: failed, but not broken."""
        if self.error is None:
            return False
        return not (self.error_stage == "env" and self.terminated)

    @property
    def invalid_count(self) -> int:
        """Number of turns whose action was invalid."""
        return sum(not t.action_valid for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (inverse of :meth:`from_dict`), with ``key`` and ``version`` added for readers."""
        data = asdict(self)
        data["turn_spans"] = [list(span) for span in self.turn_spans]
        data["key"] = self.key
        data["version"] = RECORD_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        """Rebuild a trajectory from :meth:`to_dict` output, or from a line of an older file (see the
        module docstring; the declared record upgrades run too); unknown keys are ignored.

        Raises:
            ValueError: when ``data`` is not a dict with a ``task_id``, or a record upgrade fails on it.
        """
        if not isinstance(data, dict) or "task_id" not in data:
            raise ValueError("a trajectory record needs at least a 'task_id'.")
        data = upgraded_record(_upgraded(data))
        known = {f.name for f in fields(cls)}
        turn_keys = {f.name for f in fields(Turn)}
        values = {k: v for k, v in data.items() if k in known}
        values["task_id"] = str(values["task_id"])
        values["turns"] = [_turn_from_dict(t, turn_keys) for t in data.get("turns") or []]
        values["turn_spans"] = [tuple(span) for span in data.get("turn_spans") or []]
        values["position_rewards"] = {int(k): float(v) for k, v in (data.get("position_rewards") or {}).items()}
        values["attempt"] = int(values.get("attempt") or 0)
        return cls(**values)


def _upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` in the current layout: the stage split off an older ``error`` prefix, and the names of
    the earlier evaluation record (``total_reward``, ``agent_s``, turns with ``turn``/``action``)."""
    data = dict(data)
    error = data.get("error")
    if error is not None and data.get("error_stage") is None:
        data["error"], data["error_stage"] = _split_legacy_error(str(error))
    if "episode_return" not in data and isinstance(data.get("total_reward"), (int, float)):
        data["episode_return"] = data["total_reward"]
    if "policy_s" not in data and isinstance(data.get("agent_s"), (int, float)):
        data["policy_s"] = data["agent_s"]
    data["turns"] = [_upgraded_turn(t) for t in data.get("turns") or []]
    return data


def _split_legacy_error(error: str) -> tuple[str, str | None]:
    for prefix, stage in _LEGACY_PREFIXES:
        if error.startswith(prefix):
            return error[len(prefix):], stage
    return error, None


def _upgraded_turn(turn: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(turn, dict):
        raise ValueError(f"a turn record must be a dict, got {type(turn).__name__}.")
    turn = dict(turn)
    if "index" not in turn and isinstance(turn.get("turn"), int):
        turn["index"] = turn["turn"] - 1
    if "completion_text" not in turn and "action" in turn:
        turn["completion_text"] = turn["action"]
    if isinstance(turn.get("prompt"), str):  # a text prompt belongs in prompt_text
        turn["prompt_text"] = turn.get("prompt_text") or turn["prompt"]
        turn["prompt"] = None
    turn.setdefault("index", 0)
    turn.setdefault("prompt_text", "")
    turn.setdefault("completion_text", "")
    return turn


def _turn_from_dict(data: dict[str, Any], keys: set[str]) -> Turn:
    values = {k: v for k, v in data.items() if k in keys}
    values["role_generations"] = [RoleGeneration.from_dict(g) for g in data.get(ROLE_GENERATIONS) or []]
    return Turn(**values)


def info_subset(info: dict[str, Any], keys: Iterable[str] | None = INFO_SUBSET) -> dict[str, Any]:
    """The JSON-friendly part of ``info`` worth keeping in a record.

    With ``keys``: those entries (when present), values that are not str/int/float/bool/None
    turned into strings. With ``keys=None``: every str/int/float/bool/None entry except
    :data:`SKIPPED_INFO_KEYS`, strings cut to :data:`MAX_INFO_TEXT` characters (what an
    evaluation keeps per turn: an env's own scalar metrics included).
    """
    out: dict[str, Any] = {}
    if keys is None:
        for key, value in info.items():
            if not isinstance(key, str) or key in SKIPPED_INFO_KEYS:
                continue
            if isinstance(value, str):
                out[key] = value[:MAX_INFO_TEXT]
            elif value is None or isinstance(value, (bool, int, float)):
                out[key] = value
        return out
    for key in keys:
        if key in info:
            value = info[key]
            out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return out


def jsonl_line(trajectory: Trajectory) -> str:
    """One JSONL line for ``trajectory``: readable UTF-8 JSON, or, when the record holds text that UTF-8
    cannot encode (a lone surrogate a model or server sent), the same JSON with ``\\u`` escapes, which
    reads back to the identical strings. The record is kept either way, never dropped."""
    data = trajectory.to_dict()
    line = json.dumps(data, ensure_ascii=False, default=str)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(data, ensure_ascii=True, default=str)
    return line + "\n"


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
        self._file.write(jsonl_line(trajectory))
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> TrajectoryWriter:
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
            except (ValueError, TypeError) as exc:
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
                "error_stage": traj.error_stage or "",
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
        "error_stage": t.error_stage or "",
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

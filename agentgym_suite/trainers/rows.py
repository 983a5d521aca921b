"""Turn episodes into training rows (the two layouts) and the credit plug-ins' batch.

* ``turn`` layout (verl-agent): one row per agent turn; prompt = that turn's prompt ids,
  completion = that turn's generated ids; every row of an episode carries the episode return.
* ``trajectory`` layout: one row per episode; prompt = the first turn's prompt ids,
  completion = generated ids and env-reply ids of every turn in order, with ``env_mask`` 0 on
  the env's tokens (TRL's ``tool_mask``/``env_mask`` convention).

Simulator rows (EnvACE, ``simulator_rows=True``): every trainable generation the world model
made while answering the episode's tool calls becomes one row of role ``simulator`` carrying
the episode return (the same score as the episode's Caller rows). A simulator generation is
a separate prompt to the same weights, not part of the Caller's conversation, so it is its
own row in **both** layouts: the trajectory layout gives one Caller row per episode plus one
row per simulator generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from agentgym_suite.envs.rehearsal.rows import simulator_row_records
from agentgym_suite.trainers.episodes import Episode, TurnRecord


@dataclass
class Row:
    """One training row."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    logprobs: list[float]
    group: Any
    traj: Any
    turn_idx: int
    role: str
    ret: float
    invalid: bool
    step_reward: float
    anchor: str
    position: int
    episode: Episode
    turns: list[TurnRecord] = field(default_factory=list)
    """The turns this row covers (one in the turn layout, all in the trajectory layout)."""


def build_rows(episodes: Sequence[Episode], layout: str, *, simulator_rows: bool = False) -> list[Row]:
    """Rows of every episode in the given layout; episodes without turns give no row.

    With ``simulator_rows`` the world model's generations recorded on the turns are added as
    ``simulator`` rows after the episode's own rows.
    """
    if layout not in ("turn", "trajectory"):
        raise ValueError(f"row layout {layout!r}; choose 'turn' or 'trajectory'.")
    rows: list[Row] = []
    for ep in episodes:
        if not ep.turns:
            continue
        rows += _agent_rows(ep, layout)
        if simulator_rows:
            rows += simulator_rows_of(ep)
    return rows


def simulator_rows_of(ep: Episode) -> list[Row]:
    """One ``simulator`` row per trainable world-model generation of the episode, in call order."""
    rows: list[Row] = []
    generations = [g for t in ep.turns for g in t.simulator]
    for index, gen in enumerate(generations):
        for record in simulator_row_records([gen], episode_return=ep.ret, group=ep.group, traj=ep.traj):
            record["turn_idx"] = index
            turn = TurnRecord(
                prompt_ids=record["prompt_ids"], completion_ids=record["completion_ids"], logprobs=record["logprobs"],
                text=str(gen.get("completion_text", "")), observation=record["anchor"], role="simulator",
                position=record["position"], finish_reason=str(gen.get("finish_reason", "stop")),
                valid=not record["invalid"],
            )
            rows.append(Row(**record, episode=ep, turns=[turn]))
    return rows


def _agent_rows(ep: Episode, layout: str) -> list[Row]:
    rows: list[Row] = []
    if layout == "turn":
        for k, t in enumerate(ep.turns):
            ret = ep.position_rewards.get(t.position, 0.0) if ep.position_rewards else ep.ret
            rows.append(Row(
                prompt_ids=t.prompt_ids, completion_ids=t.completion_ids, env_mask=[1] * len(t.completion_ids),
                logprobs=t.logprobs, group=ep.group, traj=ep.traj, turn_idx=k, role=t.role, ret=ret,
                invalid=not t.valid, step_reward=t.reward, anchor=t.observation, position=t.position,
                episode=ep, turns=[t],
            ))
        return rows
    ids: list[int] = []
    mask: list[int] = []
    logps: list[float] = []
    for t in ep.turns:
        ids += t.completion_ids
        mask += [1] * len(t.completion_ids)
        logps += t.logprobs
        if t is not ep.turns[-1]:
            ids += t.env_ids
            mask += [0] * len(t.env_ids)
            logps += [0.0] * len(t.env_ids)
    rows.append(Row(
        prompt_ids=ep.turns[0].prompt_ids, completion_ids=ids, env_mask=mask, logprobs=logps, group=ep.group,
        traj=ep.traj, turn_idx=0, role=ep.turns[0].role, ret=ep.ret, invalid=ep.invalid_count > 0,
        step_reward=ep.ret, anchor=ep.turns[0].observation, position=0, episode=ep, turns=list(ep.turns),
    ))
    return rows


def pad_right(seqs: Sequence[Sequence[float]], value: float, width: int, dtype: torch.dtype) -> torch.Tensor:
    """Stack sequences right-padded with ``value`` to ``width``."""
    out = torch.full((len(seqs), width), value, dtype=dtype)
    for i, s in enumerate(seqs):
        if len(s):
            out[i, : len(s)] = torch.tensor(list(s), dtype=dtype)
    return out


def pad_left(seqs: Sequence[Sequence[int]], value: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack id sequences left-padded to ``width``; returns (ids, mask)."""
    ids = torch.full((len(seqs), width), value, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        if len(s):
            ids[i, width - len(s):] = torch.tensor(list(s), dtype=torch.long)
            mask[i, width - len(s):] = 1
    return ids, mask

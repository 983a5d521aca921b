"""Turn the rollout engine's trajectories into training rows (the two layouts).

Rows are built from :class:`~agentgym_suite.rollout.records.Trajectory` /
:class:`~agentgym_suite.rollout.records.Turn` records, the one record type of the suite.

* ``turn`` layout (verl-agent): one row per agent turn; prompt = the ids the turn was
  conditioned on, completion = the ids it generated; every row carries the episode return
  (SkillRise: the reward of the task at the turn's position).
* ``trajectory`` layout: one row per episode; prompt = the first prompt's ids, completion =
  every generation and every env reply in order up to the end of the last generation, with
  ``env_mask`` 0 on the env's tokens (TRL's ``tool_mask``/``env_mask`` convention). This needs
  the token sequence of a ``chat`` rollout; an episode without one (an env that renders its
  own prompts) gives its generations back to back.

In ``chat`` rollouts the turn layout reads each turn's prompt from the episode's token
sequence (everything before the turn's span), so the ids are exactly what the model saw.

Generation rows (``generation_roles``): every trainable
:class:`~agentgym_suite.core.role_generation.RoleGeneration` a model made inside the env while
playing one of the given roles (``Turn.role_generations``; e.g. EnvACE's ``simulator``, the world
model answering the episode's tool calls) becomes one row of that role carrying the episode return,
or the generation's own ``reward`` when it has one (EnvACE gives the same score to every row of both
roles). Such a generation is a separate prompt to the same weights, not part of the agent's
conversation, so it is its own row in **both** layouts: the trajectory layout gives one agent row
per episode plus one row per generation. Generations without token ids (remote APIs, a failed
backend call) cannot be trained on and give no row; one whose text is empty is marked ``invalid``
(as EnvACE's released Simulator agent marks it).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from agentgym_suite.core.role_generation import RoleGeneration
from agentgym_suite.rollout.records import Trajectory, Turn


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
    episode: Trajectory
    turns: list[Turn] = field(default_factory=list)
    """The turns this row covers (one in the turn layout, all in the trajectory layout)."""
    family: str = ""
    """Family of the episode's task (``TextEnv.task_family``; the teacher's texts are picked by it)."""
    generated: bool = False
    """The row is a role generation of the env (``Turn.role_generations``), not an agent turn."""


def build_rows(trajectories: Sequence[Trajectory], layout: str, *, generation_roles: Collection[str] = (),
               families: Sequence[str] | None = None) -> list[Row]:
    """Rows of every trajectory in the given layout; trajectories without turns give no row.

    The generations recorded on the turns whose role is one of ``generation_roles`` are added as rows
    of their role after the episode's own rows (:func:`generation_rows_of`). ``families`` gives each
    trajectory's task family (one per trajectory).
    """
    if layout not in ("turn", "trajectory"):
        raise ValueError(f"row layout {layout!r}; choose 'turn' or 'trajectory'.")
    if families is not None and len(families) != len(trajectories):
        raise ValueError(f"got {len(families)} families for {len(trajectories)} trajectories; give one each.")
    rows: list[Row] = []
    for i, traj in enumerate(trajectories):
        if not traj.turns:
            continue
        family = families[i] if families is not None else ""
        own = _turn_rows(traj) if layout == "turn" else [_trajectory_row(traj)]
        if generation_roles:
            own += generation_rows_of(traj, generation_roles)
        for row in own:
            row.family = family
        rows += own
    return rows


def generation_rows_of(traj: Trajectory, roles: Collection[str]) -> list[Row]:
    """One row per trainable generation of the episode whose role is in ``roles``, in the order the
    env reported them; ``turn_idx`` is the generation's index among all of the episode's generations."""
    generations = [g for t in traj.turns for g in t.role_generations]
    return [_generation_row(traj, index, gen) for index, gen in enumerate(generations)
            if gen.trainable and gen.role in roles]


def _generation_row(traj: Trajectory, index: int, gen: RoleGeneration) -> Row:
    completion = list(gen.completion_ids)
    logprobs = [float(x) for x in gen.logprobs] if gen.logprobs else [0.0] * len(completion)
    # the trajectory's score, unless the env scored the generation itself (e.g. EnvACE's opt-in
    # validation variant scores a call the real env would refuse on the simulator's validation of it)
    ret = float(traj.episode_return) if gen.reward is None else float(gen.reward)
    turn = Turn(
        index=index, prompt_text=gen.prompt_text, completion_text=gen.completion_text, prompt_ids=list(gen.prompt_ids),
        completion_ids=completion, logprobs=logprobs, role=gen.role, action_valid=gen.valid,
        finish_reason=gen.finish_reason, state=gen.label, position=gen.turn,
    )
    return Row(
        prompt_ids=list(gen.prompt_ids), completion_ids=completion, env_mask=[1] * len(completion), logprobs=logprobs,
        group=traj.group_id, traj=traj.traj_id, turn_idx=index, role=gen.role, ret=ret,
        invalid=not gen.completion_text.strip(), step_reward=ret, anchor=gen.label,
        position=gen.turn, episode=traj, turns=[turn], generated=True,
    )


def _token_spans(traj: Trajectory) -> bool:
    return bool(traj.token_ids) and len(traj.turn_spans) == len(traj.turns)


def _turn_rows(traj: Trajectory) -> list[Row]:
    rows: list[Row] = []
    spans = _token_spans(traj)
    for k, t in enumerate(traj.turns):
        if spans:
            start, end = traj.turn_spans[k]
            prompt, completion = traj.token_ids[:start], traj.token_ids[start:end]
            logps = traj.token_logprobs[start:end]
        else:
            prompt, completion, logps = t.prompt_ids, t.completion_ids, t.logprobs
        ret = traj.position_rewards.get(t.position, 0.0) if traj.position_rewards else traj.episode_return
        rows.append(Row(
            prompt_ids=list(prompt), completion_ids=list(completion), env_mask=[1] * len(completion),
            logprobs=list(logps), group=traj.group_id, traj=traj.traj_id, turn_idx=k, role=t.role, ret=ret,
            invalid=not t.action_valid, step_reward=t.reward, anchor=t.state, position=t.position, episode=traj,
            turns=[t],
        ))
    return rows


def _trajectory_row(traj: Trajectory) -> Row:
    first = traj.turns[0]
    if _token_spans(traj):
        start, end = traj.prompt_length, traj.turn_spans[-1][1]
        prompt = traj.token_ids[:start]
        ids, mask, logps = traj.token_ids[start:end], traj.token_mask[start:end], traj.token_logprobs[start:end]
    else:
        prompt = first.prompt_ids
        ids = [i for t in traj.turns for i in t.completion_ids]
        logps = [x for t in traj.turns for x in t.logprobs]
        mask = [1] * len(ids)
    return Row(
        prompt_ids=list(prompt), completion_ids=list(ids), env_mask=list(mask), logprobs=list(logps),
        group=traj.group_id, traj=traj.traj_id, turn_idx=0, role=first.role, ret=traj.episode_return,
        invalid=traj.invalid_count > 0, step_reward=traj.episode_return, anchor=first.state, position=0,
        episode=traj, turns=list(traj.turns),
    )


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

"""SkillRise: credit for Solve and Curate rows of a cross-task trial.

Solve rows at position p get that task's reward ``r_p``; Curate rows at p get the discounted
rewards of the later tasks ``sum_{j>p} gamma^(j-p) r_j``; an invalid row loses
``invalid_penalty``. Advantages are mean-only within (group, position, role), as the released
``compute_skillrise_outcome_advantage`` computes them: the baseline is the mean over the
cell's trials of each trial's first row's score (its earliest turn there), a cell holding
one trial keeps its raw scores (baseline 0), and curate advantages are scaled by
``curate_loss_weight``.

A trainer plays SkillRise trials (``agentgym_suite.envs.skillrise.SkillRiseTrial``) instead of
the plain env: ``wrap_env_factory`` wraps every env in a trial of ``tasks`` related tasks.

Rewards are on the paper's scale: ALFWorld pays 10 for a success (``env_defaults`` asks the
trainer for ``reward_scale=10`` unless ``env_kwargs`` sets it), so the 0.5 invalid penalty is
5 % of a success, as in the paper. The env's ``score`` stays in [0, 1].
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Hashable, Mapping, Sequence

import torch
from torch import Tensor

from agentgym_suite.core.conformance import MethodConformance
from agentgym_suite.envs.skillrise import SkillRiseTrial
from agentgym_suite.envs.skillrise.groups import load_groups
from agentgym_suite.trainers.credit.base import (
    CreditAssigner,
    CreditBatch,
    CreditConfig,
    CreditOutput,
    finite,
    require,
)
from agentgym_suite.trainers.credit.grouping import broadcast
from agentgym_suite.trainers.credit.inputs import RowInput
from agentgym_suite.trainers.credit.skillrise.inputs import POSITIONS, positions_of

if TYPE_CHECKING:
    import gymnasium as gym

SOLVE = "solve"
"""Row role of a trial's Solve turns (the trial env's ``role`` info key)."""
CURATE = "curate"
"""Row role of a trial's Curate turns, which rewrite the trial's skill document after a task."""


@dataclass
class SkillRiseCreditConfig(CreditConfig):
    """Parameters of SkillRise credit."""

    gamma: float = field(default=0.6, metadata={"help": "Discount of later task rewards for Curate rows."})
    invalid_penalty: float = field(
        default=0.5, metadata={"help": "Subtracted from an invalid row's score (e.g. a <skill> parse failure)."}
    )
    tasks: int = field(default=3, metadata={"help": "K, related tasks per trial (Solve/Curate alternating)."})
    turns_per_task: int = field(default=10, metadata={"help": "Turn budget of each Solve task inside a trial."})
    max_chars: int = field(default=4000, metadata={"help": "Longest skill document kept (characters)."})
    order: str = field(default="easy_first", metadata={
        "help": "Order of a trial's tasks: easy_first (the paper's, by the length of the env's oracle) or drawn."})
    curate_loss_weight: float = field(default=1.0, metadata={"help": "Scale of the curate rows' advantages."})
    projection: str = field(default="env", metadata={
        "help": "How Solve answers are read: env (the env's action format) or action_tag (the released rule: "
                "<action> tags only; the env must take plain commands)."})
    groups: str | None = field(default=None, metadata={
        "help": "Curated task groups to train on (a shipped name such as alfworld_train_k3, or a .json path); "
                "None draws each trial from the first task's family."})
    group_seed: int = field(default=0, metadata={"help": "Seed of the one shuffle that orders the curated groups."})

    def __post_init__(self) -> None:
        """Validate the parameters."""
        require(finite(self.gamma) and 0.0 <= self.gamma <= 1.0,
                f"gamma must be in [0, 1] (got {self.gamma!r}); the paper uses 0.6.")
        require(finite(self.invalid_penalty) and self.invalid_penalty >= 0,
                f"invalid_penalty must be >= 0 (got {self.invalid_penalty!r}); the paper uses 0.5.")
        for name in ("tasks", "turns_per_task", "max_chars"):
            value = getattr(self, name)
            require(isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                    f"{name} must be an int >= 1 (got {value!r}); the paper uses tasks=3, turns_per_task=10, "
                    "max_chars=4000.")
        require(self.order in ("easy_first", "drawn"), f"order must be easy_first or drawn (got {self.order!r}).")
        require(finite(self.curate_loss_weight) and self.curate_loss_weight >= 0,
                f"curate_loss_weight must be >= 0 (got {self.curate_loss_weight!r}); the released run uses 1.0.")
        require(self.projection in ("env", "action_tag"),
                f"projection must be env or action_tag (got {self.projection!r}).")
        require(self.groups is None or (isinstance(self.groups, str) and bool(self.groups)),
                f"groups must be a group file name or path (got {self.groups!r}).")
        require(isinstance(self.group_seed, int) and not isinstance(self.group_seed, bool),
                f"group_seed must be an int (got {self.group_seed!r}).")


def skillrise_scores(batch: CreditBatch, gamma: float) -> Tensor:
    """Per-row credit before the invalid penalty: ``r_p`` (solve) or the discounted later
    rewards (curate). A position with no solve row in the trial counts as reward 0."""
    positions = positions_of(batch)
    task_reward: dict[tuple[object, int], float] = {}
    for i, role in enumerate(batch.roles):
        if role == SOLVE:
            task_reward[(batch.traj_ids[i], positions[i])] = float(batch.returns[i])
    later: dict[object, list[int]] = defaultdict(list)
    for traj, pos in task_reward:
        later[traj].append(pos)
    scores = []
    for i, role in enumerate(batch.roles):
        traj, p = batch.traj_ids[i], positions[i]
        if role == SOLVE:
            scores.append(task_reward[(traj, p)])
        else:
            scores.append(sum(gamma ** (j - p) * task_reward[(traj, j)] for j in later[traj] if j > p))
    return torch.tensor(scores, dtype=torch.float32, device=batch.returns.device)


def first_row_baseline(scores: Tensor, cells: list[tuple[object, int, str]], traj_ids: Sequence[Hashable],
                       turn_idx: Sequence[int]) -> Tensor:
    """Per-row baseline of the released SkillRise advantage: in each cell, the mean over trials of
    each trial's first row's score (its earliest turn in the cell); 0 in a cell of one trial."""
    first: dict[tuple[object, Hashable], tuple[int, float]] = {}
    for i, (cell, traj) in enumerate(zip(cells, traj_ids)):
        key = (cell, traj)
        if key not in first or int(turn_idx[i]) < first[key][0]:
            first[key] = (int(turn_idx[i]), float(scores[i]))
    per_cell: dict[object, list[float]] = defaultdict(list)
    for (cell_key, _), (_, score) in first.items():
        per_cell[cell_key].append(score)
    base = [sum(per_cell[c]) / len(per_cell[c]) if len(per_cell[c]) > 1 else 0.0 for c in cells]
    return torch.tensor(base, dtype=torch.float32, device=scores.device)


PAPER_ENV_SETTINGS: Mapping[str, Mapping[str, Any]] = {"ALFWorld-": {"reward_scale": 10.0}}
"""Env id prefix -> the env settings SkillRise's paper trains with (ALFWorld: success pays 10)."""


class SkillRiseCredit(CreditAssigner):
    """SkillRise: ``A_row = s_row - mean`` over the trials of one (group, position, role), each trial
    counted by its first row there; a trial alone in its cell keeps ``s_row``."""

    name: ClassVar[str] = "skillrise"
    config_cls: ClassVar[type[CreditConfig]] = SkillRiseCreditConfig
    row_inputs: ClassVar[tuple[RowInput, ...]] = (POSITIONS,)
    roles: ClassVar[tuple[str, ...]] = (SOLVE, CURATE)
    own_invalid_penalty: ClassVar[bool] = True
    conformance: ClassVar[MethodConformance | None] = MethodConformance(
        name="skillrise", subject="SkillRise: trials, Solve/Curate parsing, advantages, group order",
        upstream="github.com/lyq1119/SkillRise-reproduction-and-refinement", version="79bbd911cf5a477e13679bd7eb0728dfd871c632",
        checks=("the Solve projection (<action> tags) and the Curate parse of gold and perturbed answers",
                "whole scripted trials: every prompt's arguments, every answer's validity, the skill document "
                "after each Curate turn, the command the base env receives",
                "row scores and advantages (invalid penalty 0.5, gamma 0.6, a one-trial cell among them)",
                "the order the group loader serves curated groups in, for two seeds"),
        tests=("tests/conformance/test_skillrise.py",))
    config: SkillRiseCreditConfig

    def env_defaults(self, env_id: str) -> dict[str, Any]:
        """The paper's reward scale for ``env_id`` (ALFWorld: ``reward_scale=10``), empty for other envs."""
        for prefix, settings in PAPER_ENV_SETTINGS.items():
            if env_id.startswith(prefix):
                return dict(settings)
        return {}

    def wrap_env_factory(self, make_env: Callable[[], gym.Env], env_id: str) -> Callable[[], gym.Env]:
        """Every env becomes a trial of ``tasks`` tasks of one family (the family the env reports)."""
        cfg = self.config

        groups = load_groups(cfg.groups) if cfg.groups else None

        def make() -> gym.Env:
            return SkillRiseTrial(make_env(), k=cfg.tasks, turns_per_task=cfg.turns_per_task, max_chars=cfg.max_chars,
                                  order=cfg.order, projection=cfg.projection, groups=groups, group_seed=cfg.group_seed)

        return make

    def advantages(self, batch: CreditBatch) -> CreditOutput:
        """Mean-only advantages per (group, position, role), one value (its first row's) per trial."""
        self.check_batch(batch)
        scores = skillrise_scores(batch, self.config.gamma)
        scores = scores - self.config.invalid_penalty * batch.invalid.to(torch.float32).to(scores.device)
        cells = [(g, p, r) for g, p, r in zip(batch.group_ids, positions_of(batch), batch.roles)]
        per_row = scores - first_row_baseline(scores, cells, batch.traj_ids, batch.turn_idx)
        curate = torch.tensor([r == CURATE for r in batch.roles], dtype=torch.bool)
        per_row = torch.where(curate.to(per_row.device), per_row * self.config.curate_loss_weight, per_row)
        metrics = {
            self.metric("solve_score_mean"): float(scores[~curate].mean()) if (~curate).any() else 0.0,
            self.metric("curate_score_mean"): float(scores[curate].mean()) if curate.any() else 0.0,
            self.metric("advantage_abs_mean"): float(per_row.abs().mean()) if per_row.numel() else 0.0,
        }
        return CreditOutput(broadcast(per_row, batch.completion_mask), metrics)

    def one_turn_equivalent(self) -> tuple[str, float]:
        """A trial of one single-turn Solve task is Dr. GRPO on that task's reward."""
        return ("dr_grpo", 1.0)

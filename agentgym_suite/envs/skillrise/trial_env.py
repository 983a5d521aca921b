"""``SkillRise-v0``: SkillRise trials over any registered env id, made by ``gymnasium.make``.

This is how evaluation plays SkillRise (``agentgym eval <ID> --skillrise sequence:3``): each
episode is a trial of ``k`` tasks of the base env (related tasks ordered easier to harder, or
one task ``k`` times), with Curate turns in between, so the model's skill document is carried
along the sequence exactly as in training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from agentgym_suite.envs.skillrise.env import SkillRiseTrial

DEFAULT_TURNS_PER_TASK = 10
"""Solve turns per task: the original's limit (ALGORITHMS §4)."""


def trial_turn_limit(k: int, turns_per_task: int) -> int:
    """Turns a whole trial can take: ``k`` tasks of ``turns_per_task`` Solve turns and ``k - 1`` Curate turns."""
    return k * turns_per_task + k - 1


class SkillRiseEnv(SkillRiseTrial):
    """A :class:`SkillRiseTrial` around ``gymnasium.make(base_env_id, **base_env_kwargs)``.

    Args:
        base_env_id: the registered env whose tasks the trials hold.
        base_env_kwargs: keyword arguments of that env.
        k: tasks per trial (``sequence``) or attempts (``repeat``).
        mode: ``sequence`` or ``repeat``.
        turns_per_task: Solve turns per task (the base env's own limit also applies).
        max_chars: longest skill document kept.
        order: ``easy_first`` (the paper's order, by oracle length) or ``drawn``.
    """

    fixture_replaces_data: ClassVar[bool] = False
    """The fixture's base env (generated TextWorld games) needs no data folder."""

    @classmethod
    def sweeps(cls) -> list[Any]:
        """``--sweep skillrise:MODE:K``, offered for every env id: SkillRise trials over it."""
        return ["agentgym_suite.envs.skillrise.sweep:skillrise_sweep"]

    def __init__(self, *, base_env_id: str = "TextWorld-v0", base_env_kwargs: dict[str, Any] | None = None, k: int = 3,
                 mode: str = "sequence", turns_per_task: int = DEFAULT_TURNS_PER_TASK, max_chars: int = 4000,
                 order: str = "easy_first") -> None:
        import agentgym_suite  # noqa: F401  (registers the base ids)

        if base_env_id.startswith("SkillRise-"):
            raise ValueError("base_env_id must be a benchmark env, not a SkillRise trial.")
        self.base_env_id = base_env_id
        self.base_env_kwargs = dict(base_env_kwargs or {})
        super().__init__(gym.make(base_env_id, **self.base_env_kwargs), k=k, turns_per_task=turns_per_task,
                         max_chars=max_chars, mode=mode, order=order)

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Trials of two TextWorld coin-collector games (the quickest base env to generate and win)."""
        base_class = load_env_creator(gym.spec("TextWorld-v0").entry_point)
        return {"base_env_id": "TextWorld-v0", "base_env_kwargs": base_class.fixture_kwargs(scratch), "k": 2}

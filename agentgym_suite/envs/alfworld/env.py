"""``ALFWorld-v0``: ALFWorld's household tasks on its real PDDL text engine.

Games are the self-contained ``game.tw-pddl`` files under
``$AGENTGYM_DATA/alfworld/json_2.1.1/<split>/<task folder>/<trial>/``; they are played with
TextWorld's PDDL backend and ALFWorld's own name demangler, so observations, task texts and
admissible commands read exactly as ALFWorld shows them.

The PDDL engine has no interpreter, so the out-of-world commands TextWorld-v0 refuses
(``save``, ``script``, ``restart``, ...; see ``envs/textworld/meta_commands.py``) are unknown
commands here: ALFWorld answers "Nothing happens." and nothing changes, as in the original.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.data import benchmark_dir
from agentgym_suite.core.errors import missing_backend
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.skills import SkillBook
from agentgym_suite.core.text_env import TaskStart
from agentgym_suite.envs.shared.textworld_engine import TextWorldBackedEnv, normalise_command

SPLITS = ("valid_seen", "valid_unseen", "train")
"""``valid_seen`` (140 games, in-distribution): what verl-agent and the seed papers report as ALFWorld's
score, so the default; ``valid_unseen`` (134 games): ALFWorld's out-of-distribution split; ``train``."""
FULL_TRAIN_GAMES = 3553
"""Games in the released ``json_2.1.1/train`` split (``agentgym data fetch alfworld`` checks them)."""
TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""The six ALFWorld task types; a game's type is the prefix of its task folder name."""

TASK_FAMILIES = {
    "pick_and_place_simple": "pick_and_place",
    "look_at_obj_in_light": "look_at_obj_in_light",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
    "pick_two_obj_and_place": "pick_two",
}
"""The task family of each task type (the name of its skill text for teacher context)."""


def task_type_of(task_id: str) -> str:
    """The task type of an ALFWorld task id (``<task folder>/<trial>``)."""
    return task_id.split("-", 1)[0]


class ALFWorldEnv(TextWorldBackedEnv):
    """ALFWorld text games.

    Args:
        split: ``valid_seen`` (140 games, the default: verl-agent's evaluation and the one its papers'
            ALFWorld numbers are measured on), ``valid_unseen`` (134, ALFWorld's out-of-distribution
            split) or ``train`` (3,553 games when the full release is present; a smaller folder, such
            as the test fixture's 240-game subset, is played as it is and reported as a departure).
        task_types: keep only these task types (see :data:`TASK_TYPES`); ``None`` keeps all.
        reward_scale: reward on success (the seeds train with 10); 1.0 by default.
        **kwargs: see :class:`~agentgym_suite.core.text_env.TextEnv`.

    Task ids are ``<task folder>/<trial folder>`` relative to the split, e.g.
    ``pick_and_place_simple-Book-None-Desk-304/trial_T2019…``.
    """

    benchmark = "alfworld"
    prompt_description = "the ALFRED embodied household environment"
    evaluation_defaults = {"split": "valid_seen"}
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(fuzz_examples=4, oracle_examples=3)
    """Few fuzz examples: every step runs the PDDL planner."""

    def __init__(
        self,
        *,
        split: str = "valid_seen",
        task_types: list[str] | tuple[str, ...] | None = None,
        reward_scale: float = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(reward_scale=reward_scale, **kwargs)
        if split not in SPLITS:
            raise ValueError(f"split={split!r}; choose one of {SPLITS}.")
        unknown = set(task_types or ()) - set(TASK_TYPES)
        if unknown:
            raise ValueError(f"Unknown ALFWorld task type(s) {sorted(unknown)}; choose from {TASK_TYPES}.")
        self.split = split
        self.task_types = tuple(task_types) if task_types else TASK_TYPES
        root = benchmark_dir("alfworld", f"json_2.1.1/{split}")
        self._split_dir = root / "json_2.1.1" / split
        self._games = {
            str(path.parent.relative_to(self._split_dir)): path
            for path in sorted(self._split_dir.glob("*/*/game.tw-pddl"))
            if task_type_of(path.parent.parent.name) in self.task_types
        }
        self._ids = sorted(self._games)

    def task_ids(self) -> list[str]:
        return list(self._ids)

    def evaluation_split(self) -> str:
        """The split played: ``valid_seen``, ``valid_unseen`` or ``train``."""
        return self.split

    def leaderboard_departures(self) -> list[str]:
        """A subset of the task types, or a train folder with fewer games than the release."""
        departures = []
        if self.task_types != TASK_TYPES:
            departures.append(f"only task types {', '.join(self.task_types)} are played, not all six")
        if self.split == "train":
            games = sum(1 for _ in self._split_dir.glob("*/*/game.tw-pddl"))
            if games < FULL_TRAIN_GAMES:
                departures.append(f"the train folder holds {games} of the release's {FULL_TRAIN_GAMES} games (a "
                                  "subset); `agentgym data fetch alfworld` installs the full split")
        return departures

    def task_family(self, task_id: str) -> str:
        """The family of the task's type (see :data:`TASK_FAMILIES`)."""
        return TASK_FAMILIES.get(task_type_of(task_id), "")

    skills_released: ClassVar[str] = "alfworld"
    skills_fallback: ClassVar[Path | None] = Path(__file__).with_name("skills")

    @classmethod
    def skill_for_task(cls, book: SkillBook, task_id: str, family: str, prompt_text: str) -> str:
        """Released texts: the skill of the first task type the game's path contains (the authors
        select by the game file, whose folder our task id is); fallback texts: the family's."""
        return book.for_path(task_id) if book.mapped else book.for_family(family)

    def game_file(self, task_id: str) -> Path:
        """Path of the ``game.tw-pddl`` file of ``task_id``."""
        return self._games[self.resolve_task_id(task_id, self._ids)]

    def _load_task(self, task_id: str) -> TaskStart:
        try:
            import textworld
            from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
            from textworld.envs.pddl import PddlEnv
        except ImportError as exc:
            raise missing_backend("alfworld", "alfworld") from exc
        path = self._games[task_id]
        if self._game is None or self._loaded != str(path):
            self.close_game()
            infos = textworld.EnvInfos(won=True, admissible_commands=True, score=True, max_score=True,
                                       extras=["walkthrough"])
            game = AlfredDemangler(PddlEnv(infos), shuffle=False)
            game.load(json.loads(path.read_text()))  # data, not a path: the engine leaves files open
            self._game = game
            self._loaded = str(path)
        state = self._game.reset()
        self._begin(state)
        self._max_score = 1.0
        self._walkthrough = [normalise_command(c) for c in (state.get("extra.walkthrough") or [])]
        observation = self._clean_feedback(state.feedback or "")
        task = observation.split("Your task is to:", 1)[-1].strip() if "Your task is to:" in observation else ""
        return TaskStart(observation, task, list(state.get("admissible_commands") or []),
                         extra={"task_type": task_type_of(task_id)})

    def _step_reward(self, score_delta: float, won: bool) -> float:
        return self.reward_scale if won else 0.0

    def _replan(self) -> list[str]:
        """Ask the PDDL planner for a plan from the current state."""
        inner = self._game
        while not hasattr(inner, "_pddl_state") and getattr(inner, "_wrapped_env", None) is not None:
            inner = inner._wrapped_env
        plan = inner._pddl_state.replan(inner._entity_infos)
        return [normalise_command(c) for c in plan or []]

    def _privileged_info(self) -> dict[str, Any]:
        return {"oracle": self.oracle(), "walkthrough": list(self._walkthrough),
                "task_type": task_type_of(self._task_id or "")}

"""``TextWorld-v0``: games generated offline with TextWorld's own generator.

Each env instance holds a family of ``n_games`` games of one challenge and difficulty; task
ids are ``game-0 … game-{n-1}``, generated lazily from ``seed`` (plus a per-split offset) and
cached on disk, so the same kwargs give the same games on every run and machine.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar

from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import TaskStart
from agentgym_suite.envs.shared.textworld_engine import GAME_LOAD_LOCK, TextWorldBackedEnv, normalise_command
from agentgym_suite.envs.textworld.games import (
    SPLIT_SEED_OFFSETS,
    DamagedGameError,
    generate_game,
    resolve_settings,
    story_file_problem,
)
from agentgym_suite.envs.textworld.meta_commands import meta_command_problem


class TextWorldEnv(TextWorldBackedEnv):
    """A family of generated TextWorld games.

    Args:
        challenge: ``custom``, ``tw-cooking``, ``tw-coin_collector`` or ``tw-treasure_hunter``.
        settings: difficulty knobs (see ``agentgym_suite.envs.textworld.games.DEFAULT_SETTINGS``).
        n_games: number of games in the family (task ids ``game-0`` …).
        seed: base seed of the family.
        split: ``train``, ``valid`` or ``test``: disjoint seed ranges of the same family.
        planner_infos: request TextWorld's per-step planner (``policy_commands`` in ``info``).
            It costs 2-3x in steps/s, so it is off unless asked for; the oracle uses it only
            when the agent has left the walkthrough.
        reward_scale: multiplies the per-step score delta.
        games_dir: where to read and cache generated games (default: games already in
            ``$AGENTGYM_DATA/textworld/games`` are read from there; new ones are written to
            the cache folder, ``$AGENTGYM_CACHE`` or the per-user cache; see ``games.py``).
        **kwargs: see :class:`~agentgym_suite.core.text_env.TextEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``max_score``: int, in the reset info: the game's maximum score.
    """

    benchmark = "textworld"
    info_keys: ClassVar[dict[str, str]] = {
        "max_score": "int, in the reset info: the game's maximum score.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(
        fuzz_examples=40, oracle_examples=12, refused_command=meta_command_problem)
    """The interpreter's out-of-world commands are always refused (see :mod:`.meta_commands`)."""
    prompt_description = "a text adventure game"

    def __init__(
        self,
        *,
        challenge: str = "custom",
        settings: dict[str, Any] | None = None,
        n_games: int = 10,
        seed: int = 1234,
        split: str = "train",
        planner_infos: bool = False,
        reward_scale: float = 1.0,
        games_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(reward_scale=reward_scale, **kwargs)
        if n_games < 1:
            raise ValueError(f"n_games must be >= 1, got {n_games}.")
        if split not in SPLIT_SEED_OFFSETS:
            raise ValueError(f"split={split!r}; choose one of {sorted(SPLIT_SEED_OFFSETS)}.")
        self.challenge = challenge
        self.settings = resolve_settings(challenge, settings)
        self.n_games = int(n_games)
        self.base_seed = int(seed)
        self.split = split
        self.planner_infos = planner_infos
        self.games_dir = games_dir
        self._ids = [f"game-{i}" for i in range(self.n_games)]

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """Two coin-collector games: the quickest family to generate and to win."""
        return {"challenge": "tw-coin_collector", "n_games": 2}

    def task_ids(self) -> list[str]:
        return list(self._ids)

    def game_seed(self, task_id: str) -> int:
        """The generator seed of ``task_id``."""
        index = self._ids.index(self.resolve_task_id(task_id, self._ids))
        return self.base_seed + SPLIT_SEED_OFFSETS[self.split] + index

    def game_file(self, task_id: str) -> str:
        """Path of the game of ``task_id`` (generated on first use)."""
        from pathlib import Path

        root = Path(self.games_dir) if self.games_dir else None
        return str(generate_game(self.challenge, self.settings, self.game_seed(task_id), root))

    def _start(self, path: str, planner: bool) -> Any:
        import textworld

        problem = story_file_problem(path)  # the interpreter would end the process on a bad file
        if problem:
            raise DamagedGameError(f"The game file {path} {problem}. Delete it; the next reset generates it again.")

        # one load at a time: TextWorld's game parser is not thread-safe (nor is catch_warnings)
        with GAME_LOAD_LOCK, warnings.catch_warnings():
            # jericho warns that generated games lack its per-game score tables; TextWorld
            # tracks score itself, so the warning says nothing about these games.
            warnings.filterwarnings("ignore", message=".*is not fully supported.*")
            return textworld.start(path, request_infos=self._request_infos(planner))

    def _command_problem(self, command: str) -> str:
        """Also refuse the interpreter's out-of-world commands (save, restart, script, ...):
        see :mod:`agentgym_suite.envs.textworld.meta_commands` for the list and why."""
        return super()._command_problem(command) or meta_command_problem(command)

    def _request_infos(self, planner: bool) -> Any:
        import textworld

        return textworld.EnvInfos(
            admissible_commands=True, score=True, max_score=True, won=True, lost=True,
            objective=True, description=True, extras=["walkthrough"], policy_commands=planner,
        )

    def _load_task(self, task_id: str) -> TaskStart:
        path = self.game_file(task_id)
        if self._game is not None and self._loaded == path:
            state = self._game.reset()
        else:
            self.close_game()
            self._game = self._start(path, self.planner_infos)
            self._loaded = path
            state = self._game.reset()
        self._begin(state)
        self._walkthrough = [normalise_command(c) for c in (state.get("extra.walkthrough") or [])]
        objective = (state.get("objective") or "").strip()
        description = (state.get("description") or "").strip()
        observation = self._clean_feedback(f"{objective}\n\n{description}")
        return TaskStart(observation, objective, list(state.get("admissible_commands") or []),
                         extra={"max_score": self._max_score})

    def _replan(self) -> list[str]:
        """Replay the episode in a planner-enabled copy of the game and read its plan."""
        probe = self._start(self._loaded, True)
        try:
            state = probe.reset()
            for command in self._history:
                state, _, _ = probe.step(command)
            return [normalise_command(c) for c in (state.get("policy_commands") or [])]
        finally:
            probe.close()

    def _privileged_info(self) -> dict[str, Any]:
        return {"oracle": self.oracle(), "walkthrough": list(self._walkthrough)}

"""Shared stepping logic for envs backed by a TextWorld ``Environment`` (TextWorld, ALFWorld)."""

from __future__ import annotations

import re
import threading
from typing import Any, ClassVar

from agentgym_suite.core.actions import ParsedAction
from agentgym_suite.core.text_env import StepOutcome, TextEnv


def normalise_command(command: str) -> str:
    """Lower-case and collapse whitespace, the way both engines expect commands."""
    return re.sub(r"\s+", " ", command.strip().lower())


GAME_LOAD_LOCK = threading.Lock()
"""Held while TextWorld loads a game: its logic parser (a module-level tatsu parser) is not
thread-safe, and concurrent loads in one process (sessions of ``agentgym serve``, threads of an
env pool) failed with ``IndexError: pop from empty list``."""
MAX_GAME_COMMAND_CHARS = 200
"""The game engines truncate longer commands; longer ones are rejected before they get there."""


class TextWorldBackedEnv(TextEnv):
    """A :class:`TextEnv` whose dynamics come from a running TextWorld ``Environment``.

    Subclasses start ``self._game`` (a ``textworld.core.Environment``) in ``_load_task`` and
    keep the walkthrough of the task in ``self._walkthrough``. Per-step reward is the score
    delta times ``reward_scale``; the normalised score is score / max score.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``command``: str: the command the action was read as.
        ``command_admissible``: bool: that command was among the admissible ones.
        ``policy_commands``: list[str], with the planner on: the planner's commands from this state.
    """

    copyable: ClassVar[bool] = False  # the game engine (Jericho, the PDDL planner) lives in C memory
    info_keys: ClassVar[dict[str, str]] = {
        "command": "str: the command the action was read as.",
        "command_admissible": "bool: that command was among the admissible ones.",
        "policy_commands": "list[str], with the planner on: the planner's commands from this state.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""

    def __init__(self, *, reward_scale: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reward_scale = float(reward_scale)
        self._game: Any = None
        self._loaded: str | None = None
        """Path of the game ``self._game`` runs (reused across resets of the same task)."""
        self._state: Any = None
        self._walkthrough: list[str] = []
        self._history: list[str] = []
        self._raw_score = 0.0
        self._max_score = 1.0

    # ------------------------------------------------------------------ oracle
    def oracle(self) -> list[str]:
        """Remaining walkthrough when the episode followed it so far, else a fresh plan."""
        if self._state is None:
            return []
        if self._state["won"]:
            return []
        walked = self._history
        if walked == self._walkthrough[: len(walked)]:
            remaining = self._walkthrough[len(walked):]
        else:
            remaining = self._replan()
        return [self.format_action(c) for c in remaining]

    def _replan(self) -> list[str]:
        """A plan from the current state when the agent left the walkthrough."""
        raise NotImplementedError

    # ------------------------------------------------------------------ stepping
    def _begin(self, state: Any) -> None:
        self._state = state
        self._history = []
        self._raw_score = float(state.get("score") or 0)
        self._max_score = float(state.get("max_score") or 1) or 1.0

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        command = normalise_command(command)
        problem = self._command_problem(command)
        if problem:
            return StepOutcome(f"The game does not take that command: {problem}.", 0.0, self._score_now(),
                               action_valid=False, extra={"invalid_reason": problem})
        admissible_list = self._state.get("admissible_commands") or []
        known = command in admissible_list
        if not known:  # the engine may spell it with capitals (PDDL matching is exact)
            spelled = {normalise_command(a): a for a in admissible_list}
            known = command in spelled
            command = spelled.get(command, command)
        try:
            state, _, done = self._game.step(command)
        except Exception as exc:  # a dying backend ends this episode, not the batch
            return StepOutcome(f"The game engine failed: {type(exc).__name__}: {exc}", 0.0, self._score_now(),
                               truncated=True, action_valid=False, extra={"error": f"backend error: {exc!r}"})
        if known:
            self._history.append(normalise_command(command))
        self._state = state
        new_score = float(state.get("score") or 0)
        delta = new_score - self._raw_score
        self._raw_score = new_score
        won = bool(state.get("won"))
        lost = bool(state.get("lost"))
        feedback = self._clean_feedback(state.feedback or "")
        if not known:
            feedback = feedback or "Nothing happens."
        # A well-formed command the game does not know is a valid action with no effect
        # (as in the seeds); ``command_admissible`` tells the two apart.
        extra: dict[str, Any] = {"command": command, "command_admissible": known}
        if "policy_commands" in state and state["policy_commands"] is not None:
            extra["policy_commands"] = list(state["policy_commands"])
        return StepOutcome(
            observation=feedback,
            reward=self._step_reward(delta, won),
            score=1.0 if won else max(0.0, min(1.0, new_score / self._max_score)),
            won=won,
            terminated=bool(done or won or lost),
            admissible_actions=list(state.get("admissible_commands") or []),
            extra=extra,
        )

    @staticmethod
    def _command_problem(command: str) -> str:
        if not command.isascii():
            return "commands must be plain ASCII text"
        if len(command) > MAX_GAME_COMMAND_CHARS:
            return f"commands are at most {MAX_GAME_COMMAND_CHARS} characters"
        return ""

    def _score_now(self) -> float:
        return max(0.0, min(1.0, self._raw_score / self._max_score))

    def _step_reward(self, score_delta: float, won: bool) -> float:
        return score_delta * self.reward_scale

    @staticmethod
    def _clean_feedback(text: str) -> str:
        """Drop the engine's ``>`` prompt lines (with the status bar some replies carry) and
        runs of blank lines."""
        lines = [line.rstrip() for line in text.splitlines() if not line.lstrip().startswith(">")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()

    def close_game(self) -> None:
        """Stop the running game (the env stays usable; the next reset starts one)."""
        if self._game is not None:
            try:
                self._game.close()
            finally:
                self._game = None
                self._loaded = None

    def close(self) -> None:
        self.close_game()
        super().close()

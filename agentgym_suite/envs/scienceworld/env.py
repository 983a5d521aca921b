"""``ScienceWorld-v0``: ScienceWorld's 30 elementary-science tasks on the real Java simulator.

Task ids are ``<task-name>/<variation>`` (``boil/3``); ``task=`` picks the tasks (a name such
as ``"boil"``, a paper number ``"1-1"``, an index 0-29, a list of these, or ``"all"``) and
``split=`` the variations (``train``/``dev``/``test`` as the simulator splits them, or
``all``). Scores follow the simulator: 0-100, normalised to ``info["score"]`` in [0, 1]; the
per-step reward is the score change / 100; the task is won at 100, and a failed task (the
simulator's score drops below zero, e.g. after focusing on the wrong object) ends the
episode with ``won=False``.

Seeding: the seeded ``np_random`` picks the task and variation, and the simulator reseeds its
own random generator from the variation at every load, so the same seed sequence gives the
same episodes; the JVM runs with deterministic identity hashes so that a reload also lists a
room's objects in the same order (see ``backend.DETERMINISTIC_JVM_OPTIONS``).

One JVM per env, started on the first ``reset()`` (constructing the env is cheap) and shut
down by ``close()``, after which the env refuses ``step``/``reset`` (``ClosedEnvError``) rather
than start another. Every simulator call runs under a timeout; a call that times out or
finds the JVM dead kills the JVM, ends the episode as truncated with ``info["error"]``, and
the next ``reset()`` starts a fresh JVM.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any, ClassVar

from gymnasium.error import ResetNeeded

from agentgym_suite.core.actions import ActionFormat, ParsedAction, encoding_problem
from agentgym_suite.core.fixture_profile import FixtureProfile
from agentgym_suite.core.text_env import StepOutcome, TaskStart, TextEnv
from agentgym_suite.envs.scienceworld.actions import rank_actions
from agentgym_suite.envs.scienceworld.backend import SimulatorCrashed, SimulatorProcess, SimulatorRejected
from agentgym_suite.envs.scienceworld.tasks import (
    TaskSpec,
    check_simplification,
    check_split,
    parse_task_id,
    select_tasks,
    task_id_of,
)

NO_MATCH = "No known action matches that input."
FREE_PREFIXES = ("look", "inventory", "task", "examine", "read")
"""Commands that do not change the world; they do not count as leaving the gold path."""
REFUSED_COMMANDS = {"reset task": "it would reset the task's progress while the world and the episode go on"}
"""Simulator commands that act on the episode from outside the world; they are invalid actions.
``reset task`` zeroes the score and focus but keeps every change made to the world, so the
episode's score, reward and gold-path tracking would no longer describe the simulator (the
admissible list leaves it out for the same reason). The simulator matches commands without
regard to case or spacing, and so does this check."""


def _load(server: Any, name: str, variation: int, simplification: str, gold: bool) -> tuple[str, str, list[str] | None]:
    server.load(name, variation, simplification, gold)
    server.reset()
    look = str(server.step("look around"))
    description = str(server.getTaskDescription())
    gold_path = [str(a) for a in server.getGoldActionSequence()] if gold else None
    return look, description, gold_path


def _step(server: Any, command: str) -> tuple[str, float, bool]:
    observation = str(server.step(command))
    return observation, float(server.getScore()), bool(server.getCompleted())


def _valid_actions(server: Any) -> list[dict[str, Any]]:
    return json.loads(str(server.getValidActionObjectCombinationsJSON()))["validActions"]


class ScienceWorldEnv(TextEnv):
    """ScienceWorld on its Java simulator, behind the suite's text-env contract.

    Args:
        task: task name, paper number (``"4-1"``), index 0-29, a list of them, or ``"all"``.
        split: ``train`` (the default, for training), ``dev``, ``test`` (the simulator's variation
            splits; ``agentgym eval`` uses ``test`` unless told otherwise) or ``all``.
        simplification: ``""``, ``"easy"`` or a comma-separated list of ``teleportAction``,
            ``selfWateringFlowerPots``, ``openContainers``, ``openDoors``, ``noElectricalAction``.
        max_admissible: size cap of ``info["admissible_actions"]``, a heuristic ranking of the
            simulator's valid actions (never the gold path); ``None`` turns the list off
            (``info["admissible_actions"]`` is then ``None``) and makes steps about 10x faster.
        step_timeout: seconds one step may take before the JVM is declared hung and killed.
        load_timeout: seconds a JVM start or task load (with gold-path search) may take.
        gold_path: generate the simulator's gold path at every load (costs 0.2-1.5 s). ``None``
            (default) does so when ``privileged=True`` and otherwise builds it on the first
            ``oracle()`` call by reloading the task and replaying the episode's commands.
        action_format, privileged, invalid_action, render_mode: see :class:`TextEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``scienceworld_score``: int: the simulator's raw score (0..100).
        ``variation``: int: the task variation played.
        ``off_gold_path``: bool: the agent left the gold action sequence.
    """

    benchmark = "scienceworld"
    info_keys: ClassVar[dict[str, str]] = {
        "scienceworld_score": "int: the simulator's raw score (0..100).",
        "variation": "int: the task variation played.",
        "off_gold_path": "bool: the agent left the gold action sequence.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    fixture_profile: ClassVar[FixtureProfile] = FixtureProfile(
        fuzz_examples=6, oracle_examples=3, admissible_guaranteed=False,
        refused_command=lambda command: " ".join(command.lower().split()) in REFUSED_COMMANDS,
        needs_programs=("java",),
    )
    """Few examples (every step crosses to the JVM); the admissible list may hold commands the
    simulator rejects ('open drawer' answered 'No known action matches that input.'); ``reset task``
    is always refused (see :data:`REFUSED_COMMANDS`)."""
    default_action_format = "plain"
    evaluation_defaults = {"split": "test"}
    """``agentgym eval`` plays the simulator's test variations, as ScienceWorld's papers report;
    the constructor's ``train`` default serves training."""
    score_scale = 100.0
    """ScienceWorld's papers report the average score on 0-100."""

    copyable: ClassVar[bool] = False  # the simulator is a JVM process behind a gateway

    def __init__(
        self,
        *,
        task: TaskSpec = "all",
        split: str = "train",
        simplification: str = "",
        max_admissible: int | None = 60,
        step_timeout: float = 20.0,
        load_timeout: float = 120.0,
        gold_path: bool | None = None,
        action_format: str | ActionFormat | None = None,
        privileged: bool = False,
        invalid_action: str = "explain",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(
            action_format=action_format, privileged=privileged, invalid_action=invalid_action, render_mode=render_mode
        )
        if max_admissible is not None and max_admissible < 1:
            raise ValueError(f"max_admissible={max_admissible}; pass a positive size or None to turn the list off.")
        if step_timeout <= 0 or load_timeout <= 0:
            raise ValueError("step_timeout and load_timeout must be positive numbers of seconds.")
        self.tasks = select_tasks(task)
        self.split = check_split(split)
        self.simplification = check_simplification(simplification, self.tasks)
        self.max_admissible = max_admissible
        self.step_timeout = float(step_timeout)
        self.load_timeout = float(load_timeout)
        self.gold_path = gold_path
        self._ids = [task_id_of(t, v) for t in self.tasks for v in t.variations_of(self.split)]
        self._process = SimulatorProcess(start_timeout=load_timeout)
        self._finalizer = weakref.finalize(self, SimulatorProcess.kill, self._process)
        self._history: list[str] = []
        self._gold: list[str] | None = None
        self._gold_pos = 0
        self._deviated = False
        self._broken: str | None = None
        self._raw_score = 0

    @classmethod
    def fixture_kwargs(cls, scratch: Path) -> dict[str, Any]:
        """One task whose gold paths are short (about ten actions)."""
        return {"task": "find-living-thing"}

    # ------------------------------------------------------------------ TextEnv API
    def evaluation_split(self) -> str:
        """The simulator's variation split played (``test`` under ``agentgym eval`` unless set)."""
        return self.split

    def task_family(self, task_id: str) -> str:
        """The task's topic among the paper's ten (``scienceworld_matter`` for boil/melt/freeze …)."""
        return parse_task_id(task_id)[0].topic

    skills_fallback: ClassVar[Path | None] = Path(__file__).with_name("skills")
    """The authors release no ScienceWorld skill texts; the teacher reads the suite's own per topic."""

    def task_ids(self) -> list[str]:
        """``<task-name>/<variation>`` for every selected task and variation of the split."""
        return list(self._ids)

    @property
    def jvm_pid(self) -> int | None:
        """Process id of this env's JVM (``None`` before the first reset or after a crash)."""
        return self._process.pid if self._process.alive else None

    def oracle(self) -> list[str]:
        """The rest of the simulator's gold path from the current point of the episode.

        The env tracks how far the executed commands follow the gold path. After a deviation
        (any world-changing command that is not the next gold step) the remaining gold steps
        are still returned but may no longer solve the task; ``info["off_gold_path"]`` says so.
        Returns ``[]`` once the episode is over.
        """
        if self._task_id is None:
            raise ResetNeeded("Call env.reset() before env.oracle().")
        if self._finished or self._broken:
            return []
        if self._gold is None:
            self._rebuild_with_gold()
        gold = self._gold or []
        return [self.format_action(command) for command in gold[self._gold_pos:]]

    def _load_task(self, task_id: str) -> TaskStart:
        task, variation = parse_task_id(task_id)
        want_gold = self.privileged if self.gold_path is None else self.gold_path
        look, description, gold = self._call_load(task.name, variation, want_gold)
        self._history = []
        self._gold = gold
        self._gold_pos = 0
        self._deviated = False
        self._broken = None
        self._raw_score = 0
        admissible = self._admissible_now(description) if self.max_admissible else None
        observation = f"{description}\n\n{look}"
        extra = {"scienceworld_score": 0, "variation": variation, "off_gold_path": False}
        return TaskStart(observation=observation, task=description, admissible_actions=admissible, extra=extra)

    def _execute(self, command: str, parsed: ParsedAction) -> StepOutcome:
        if self._broken:
            return self._broken_outcome(self._broken)
        unencodable = encoding_problem(command)
        if unencodable:  # py4j would fail to send it and the JVM would have to be restarted
            text = f"The simulator cannot take {ascii(command[:80])}: {unencodable}. Try one of the admissible actions."
            extra = {**self._extra(), "invalid_reason": f"the command cannot be sent to the simulator: {unencodable}"}
            return StepOutcome(text, 0.0, self._score, action_valid=False, extra=extra)
        refused = REFUSED_COMMANDS.get(" ".join(command.lower().split()))
        if refused:
            text = f"{command.strip()!r} is not available in this environment: {refused}. Try one of the admissible actions."
            return StepOutcome(text, 0.0, self._score, action_valid=False, extra={**self._extra(), "invalid_reason": refused})
        try:
            observation, score, completed = self._process.call(_step, command, timeout=self.step_timeout)
        except SimulatorCrashed as exc:
            self._broken = f"{exc}; the episode was cut short"
            return self._broken_outcome(self._broken)
        except SimulatorRejected as exc:
            text = f"The simulator could not run {command[:80]!r} ({exc}). Try one of the admissible actions."
            return StepOutcome(text, 0.0, self._score, action_valid=False, extra=self._extra())
        self._history.append(command)
        self._track_gold(command)
        raw = int(round(100 * score))
        reward = (max(raw, 0) - max(self._raw_score, 0)) / 100.0
        self._raw_score = raw
        won = raw >= 100
        terminated = won or raw < 0 or completed
        admissible: list[str] | None = None
        if self.max_admissible:
            admissible = [] if terminated else self._admissible_or_empty()
        if self._broken:  # the JVM died while listing the admissible actions
            return self._broken_outcome(self._broken)
        valid = not observation.startswith(NO_MATCH)
        return StepOutcome(
            observation=observation,
            reward=reward,
            score=max(raw, 0) / 100.0,
            won=won,
            terminated=terminated,
            action_valid=valid,
            admissible_actions=admissible,
            extra=self._extra(),
        )

    def close(self) -> None:
        """Shut the JVM down; the env refuses ``step``/``reset`` afterwards (no JVM is started again)."""
        self._process.close()
        super().close()

    # ------------------------------------------------------------------ internals
    def _call_load(self, name: str, variation: int, gold: bool) -> tuple[str, str, list[str] | None]:
        """Load a task, starting (or restarting once) the JVM as needed."""
        last: SimulatorCrashed | None = None
        for _ in range(2):
            try:
                self._process.start()
                return self._process.call(_load, name, variation, self.simplification, gold, timeout=self.load_timeout)
            except SimulatorCrashed as exc:
                last = exc
            except SimulatorRejected as exc:
                raise ValueError(
                    f"ScienceWorld refused to load {name}/{variation} with simplification "
                    f"{self.simplification!r}: {exc}"
                ) from None
        raise SimulatorCrashed(f"could not load ScienceWorld task {name}/{variation} after a JVM restart: {last}")

    def _admissible_now(self, description: str) -> list[str]:
        valid = self._process.call(_valid_actions, timeout=self.step_timeout)
        return rank_actions(valid, description, self.max_admissible or 0)

    def _admissible_or_empty(self) -> list[str]:
        try:
            return self._admissible_now(self._task_text)
        except SimulatorCrashed as exc:
            self._broken = f"{exc}; the episode was cut short"
        except SimulatorRejected:
            pass
        return []

    def _track_gold(self, command: str) -> None:
        if self._gold is not None and self._gold_pos < len(self._gold) and command == self._gold[self._gold_pos]:
            self._gold_pos += 1
        elif not command.startswith(FREE_PREFIXES):
            self._deviated = True

    def _rebuild_with_gold(self) -> None:
        """Reload the current task with gold-path search and replay this episode's commands."""
        assert self._task_id is not None
        task, variation = parse_task_id(self._task_id)
        history = list(self._history)
        _, _, gold = self._call_load(task.name, variation, True)
        for command in history:
            self._process.call(_step, command, timeout=self.step_timeout)
        self._gold, self._gold_pos, self._deviated = gold, 0, False
        for command in history:
            self._track_gold(command)

    def _extra(self) -> dict[str, Any]:
        return {"scienceworld_score": self._raw_score, "off_gold_path": self._deviated}

    def _broken_outcome(self, error: str) -> StepOutcome:
        text = f"The ScienceWorld simulator failed: {error}. Call reset() to start a new episode."
        extra = self._extra()
        extra["error"] = error
        admissible = [] if self.max_admissible else None
        return StepOutcome(
            text, 0.0, self._score, truncated=True, action_valid=False, admissible_actions=admissible, extra=extra
        )

"""``SyntheticTools-v0``: procedurally generated stateful tool worlds.

Each world (a theme such as library, inventory, clinic or travel, its tools and its
database) and its tasks are a pure function of ``seed``; task ids are ``"w{world}-t{task}"``.
The agent calls tools and replies in plain text when it is done: that reply ends the
episode (with ``user_turns > 1`` the request comes in that many user turns, and the reply
to the last one ends it), and the task succeeds when the final database equals the goal database (the state
the gold solution produces). With ``end_on_goal=True`` the episode also ends, won, as soon as
a tool call leaves the database in the goal state. ``score`` is partial credit: the share of
goal changes matched, counting collateral changes against it (1.0 only when won).

It is the suite's offline training world for EnvACE. Every task carries per-turn checklists
(``ToolEnv.checklists()``: each requested change made by its exact call, then a text report;
see :func:`~agentgym_suite.envs.synthetic_tools.generator.turn_checklist`), which the
rehearsal env's ``checklist`` reward scores from the trajectory, deterministically. It
overrides ``recorded_examples()`` (the gold solution's (name, arguments, result) triples,
recorded on a copy of the world: real executions of the training task); ``check_success(db)``,
``goal_db()`` and ``gold_calls()`` expose the task's goal for other checks.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any, ClassVar

from agentgym_suite.core.tool_calls import ToolCall
from agentgym_suite.core.tool_env import Conversation, ToolEnv
from agentgym_suite.envs.synthetic_tools.generator import Knobs, Task, World, generate_world
from agentgym_suite.envs.synthetic_tools.tools import WorldTools, tool_name

SYSTEM_PROMPT = (
    "You operate the {system} system through its tools. Call a tool by writing <tool_call>\n"
    "{{\"name\": ..., \"arguments\": {{...}}}}\n</tool_call>; several calls per message are allowed. "
    "Records are identified by ids; find them by name with the search tools when you do not know them. "
    "When the request is complete, reply in plain text (that reply ends the session)."
)


def state_score(initial: dict[str, Any], goal: dict[str, Any], state: dict[str, Any]) -> float:
    """Share of the goal's changes (vs ``initial``) present in ``state``, penalised by collateral changes."""
    needed = matched = collateral = 0
    for table in ("items", "owners", "meta"):
        before, want, have = initial.get(table, {}), goal.get(table, {}), state.get(table, {})
        for key in set(before) | set(want) | set(have):
            goal_changed = before.get(key) != want.get(key)
            state_changed = before.get(key) != have.get(key)
            if goal_changed:
                needed += 1
                matched += int(want.get(key) == have.get(key))
            elif state_changed and table != "meta":
                collateral += 1
    if needed == 0:
        return 1.0 if collateral == 0 else 0.0
    return matched / (needed + collateral)


class SyntheticToolsEnv(ToolEnv):
    """Seeded synthetic tool worlds.

    Args:
        seed: world-generation seed (independent of ``reset(seed=)``, which only picks a task).
        num_worlds: number of worlds in the split.
        tasks_per_world: tasks per world.
        num_tools: non-distractor tools per world, 5..15.
        task_length: target number of required calls per task (the gold solution has at
            least this many, up to about two more).
        distractors: extra read-only tools unrelated to the task (0..6).
        partial_observability: True (default) names records only by name, so ids must be
            found with the search tools; False puts the ids in the instruction.
        end_on_goal: end the episode as soon as the goal state is reached.
        user_turns: user turns per task (1..6, default 1): the requested changes are split
            over that many user messages, each answered by a text reply.
        **kwargs: see :class:`~agentgym_suite.core.tool_env.ToolEnv`.

    Info keys (besides the shared ones of :mod:`agentgym_suite.core.info`):
        ``theme``: str: the theme of the generated world.
    """

    benchmark: ClassVar[str] = "synthetic_tools"
    info_keys: ClassVar[dict[str, str]] = {
        "theme": "str: the theme of the generated world.",
    }
    """The info keys this env adds to the shared ones (:mod:`agentgym_suite.core.info`)."""
    examples_are_training_data: ClassVar[bool] = True
    """A training world: its tasks' recorded examples are training data."""

    def __init__(
        self,
        seed: int = 0,
        num_worlds: int = 50,
        tasks_per_world: int = 5,
        num_tools: int = 8,
        task_length: int = 3,
        distractors: int = 2,
        partial_observability: bool = True,
        end_on_goal: bool = False,
        user_turns: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if num_worlds < 1:
            raise ValueError(f"num_worlds={num_worlds}; it must be at least 1.")
        self.seed = int(seed)
        self.num_worlds = int(num_worlds)
        self.knobs = Knobs(num_tools=num_tools, task_length=task_length, distractors=distractors,
                           partial_observability=partial_observability, tasks_per_world=tasks_per_world,
                           user_turns=user_turns)
        self.end_on_goal = end_on_goal
        self._world_cache = lru_cache(maxsize=32)(self._generate)
        self._world: World | None = None
        self._task: Task | None = None
        self._db: dict[str, Any] = {}
        self._tools_impl: WorldTools | None = None
        self._turn_index = 0

    # ------------------------------------------------------------------ world access
    def _generate(self, index: int) -> World:
        return generate_world(self.seed, index, self.knobs)

    def world(self, index: int) -> World:
        """World ``index`` (generated on first use, then cached)."""
        if not 0 <= index < self.num_worlds:
            raise IndexError(f"world {index} out of range 0..{self.num_worlds - 1}")
        return self._world_cache(index)

    def _split(self, task_id: str) -> tuple[int, int]:
        world, task = task_id[1:].split("-t")
        return int(world), int(task)

    # ------------------------------------------------------------------ ToolEnv API
    def task_ids(self) -> list[str]:
        return [f"w{w}-t{t}" for w in range(self.num_worlds) for t in range(self.knobs.tasks_per_world)]

    def _start_conversation(self, task_id: str) -> Conversation:
        w, t = self._split(task_id)
        self._world = self.world(w)
        self._task = self._world.tasks[t]
        self._db = copy.deepcopy(self._world.db)
        self._tools_impl = WorldTools(self._world.theme, self._db)
        self._turn_index = 0
        return Conversation(
            task=self._task.instruction,
            tools=self._world.tools,
            handlers=self._tools_impl.handlers(self._world.kinds),
            system_prompt=SYSTEM_PROMPT.format(system=self._world.theme.system),
            first_user_message=self._task.instruction,
            extra={"theme": self._world.theme.system},
        )

    def _user_reply(self, assistant_text: str) -> str | None:
        """The next turn's request, or ``None`` after the last turn (which ends the episode)."""
        assert self._task is not None
        self._turn_index += 1
        messages = self._task.turn_messages or [self._task.instruction]
        return messages[self._turn_index] if self._turn_index < len(messages) else None

    def _evaluate(self) -> tuple[float, bool]:
        won = self.check_success(self._db)
        return (1.0 if won else self._partial()), won

    def _running_score(self) -> tuple[float, bool]:
        return (1.0, True) if self.check_success(self._db) else (self._partial(), False)

    def _after_calls(self, calls: list[ToolCall]) -> bool:
        return self.end_on_goal and self.check_success(self._db)

    def oracle(self) -> list[str]:
        """The gold calls not yet made (one message each), with a text reply closing each remaining turn."""
        assert self._task is not None
        made = [(r.name, r.arguments) for r in self.tool_log if r.ok]
        start = 0
        while start < len(self._task.gold) and start < len(made) and made[start] == self._task.gold[start]:
            start += 1
        if self.check_success(self._db):
            start = len(self._task.gold)
        ends = self._task.turn_ends or [len(self._task.gold)]
        steps: list[str] = []
        for k in range(self._turn_index, len(ends)):
            steps.extend(
                f"<tool_call>\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n</tool_call>"
                for name, args in self._task.gold[start:max(start, ends[k])]
            )
            start = max(start, ends[k])
            steps.append("All requested changes are done." if k == len(ends) - 1 else "Done. What else?")
        return steps

    # ------------------------------------------------------------------ hooks and goal access
    def recorded_examples(self) -> list[dict[str, Any]]:
        """(name, arguments, result) of every gold call, recorded on a copy of the world."""
        assert self._task is not None, "call reset() first"
        return copy.deepcopy(self._task.examples)

    def checklists(self) -> list[list[list[dict[str, Any]]]]:
        """One checklist: per user turn, the standards it must meet (each with a machine ``check``)."""
        assert self._task is not None, "call reset() first"
        return [copy.deepcopy(self._task.checklist)]

    def goal_db(self) -> dict[str, Any]:
        """The database the current task must end in."""
        assert self._task is not None, "call reset() first"
        return copy.deepcopy(self._task.goal_db)

    def database(self) -> dict[str, Any]:
        """A copy of the current database."""
        return copy.deepcopy(self._db)

    def check_success(self, db: dict[str, Any]) -> bool:
        """Deterministic success check: ``db`` equals the goal database (the id counter excepted)."""
        assert self._task is not None, "call reset() first"
        goal = self._task.goal_db
        return db.get("items") == goal["items"] and db.get("owners") == goal["owners"]

    def gold_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The gold solution as (tool name, arguments) pairs."""
        assert self._task is not None, "call reset() first"
        return copy.deepcopy(self._task.gold)

    def _partial(self) -> float:
        assert self._world is not None and self._task is not None
        return min(state_score(self._world.db, self._task.goal_db, self._db), 0.99)


__all__ = ["SyntheticToolsEnv", "state_score", "tool_name"]

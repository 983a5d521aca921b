"""Seeded generator of synthetic tool worlds and their tasks.

A world = a theme, a tool set (core + extra tools, plus distractors), and a database of
items and owners. A task = an instruction, a gold call sequence (found by executing it on a
copy of the world while it is generated, so later calls can use ids and values read by
earlier ones) and the goal database it produces. Everything is a pure function of
``(seed, world index, knobs)``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentgym_suite.envs.synthetic_tools.themes import FIRST_NAMES, LAST_NAMES, THEMES, Theme
from agentgym_suite.envs.synthetic_tools.tools import CORE_KINDS, DISTRACTOR_KINDS, EXTRA_KINDS, WorldTools, tool_name, tool_schema


@dataclass(frozen=True)
class Knobs:
    """Generation settings (see :class:`~agentgym_suite.envs.synthetic_tools.env.SyntheticToolsEnv`)."""

    num_tools: int = 8
    task_length: int = 3
    distractors: int = 2
    partial_observability: bool = True
    tasks_per_world: int = 5
    num_items: int = 12
    num_owners: int = 6
    user_turns: int = 1

    def __post_init__(self) -> None:
        if not 5 <= self.num_tools <= 15:
            raise ValueError(f"num_tools={self.num_tools}; choose 5..15 (non-distractor tools).")
        if not 1 <= self.task_length <= 12:
            raise ValueError(f"task_length={self.task_length}; choose 1..12 required calls.")
        if not 0 <= self.distractors <= len(DISTRACTOR_KINDS):
            raise ValueError(f"distractors={self.distractors}; choose 0..{len(DISTRACTOR_KINDS)}.")
        if not 1 <= self.user_turns <= 6:
            raise ValueError(f"user_turns={self.user_turns}; choose 1..6 user turns per task.")
        if self.tasks_per_world < 1 or self.num_items < 6 or self.num_owners < 2:
            raise ValueError("tasks_per_world must be >= 1, num_items >= 6 and num_owners >= 2.")


@dataclass
class Task:
    """One task of a world."""

    instruction: str
    gold: list[tuple[str, dict[str, Any]]]
    goal_db: dict[str, Any]
    examples: list[dict[str, Any]] = field(default_factory=list)
    turn_messages: list[str] = field(default_factory=list)
    """The user's message of each turn (the first is ``instruction``)."""
    turn_ends: list[int] = field(default_factory=list)
    """Per turn, the end (exclusive) of its gold calls in ``gold``."""
    checklist: list[list[dict[str, Any]]] = field(default_factory=list)
    """Per turn, the standards the turn must meet (see :func:`turn_checklist`)."""


@dataclass
class World:
    """One generated world."""

    theme: Theme
    kinds: list[str]
    db: dict[str, Any]
    tasks: list[Task]

    @property
    def tools(self) -> list[dict[str, Any]]:
        """OpenAI-format schemas of the world's tools."""
        return [tool_schema(k, self.theme) for k in self.kinds]


class _Builder:
    """Builds one task by picking sub-goals and running their calls on a working copy."""

    def __init__(self, world_db: dict[str, Any], theme: Theme, kinds: list[str], rng: np.random.Generator, knobs: Knobs) -> None:
        self.db = copy.deepcopy(world_db)
        self.theme, self.kinds, self.rng, self.knobs = theme, set(kinds), rng, knobs
        self.tools = WorldTools(theme, self.db)
        self.gold: list[tuple[str, dict[str, Any]]] = []
        self.examples: list[dict[str, Any]] = []
        self.parts: list[str] = []
        self.used: set[str] = set()

    def run(self, kind: str, arguments: dict[str, Any]) -> Any:
        result = self.tools.call(kind, arguments)
        name = tool_name(kind, self.theme)
        self.gold.append((name, arguments))
        self.examples.append({"name": name, "arguments": copy.deepcopy(arguments), "result": copy.deepcopy(result)})
        return result

    def pick_item(self) -> str | None:
        free = sorted(k for k in self.db["items"] if k not in self.used)
        if not free:
            return None
        key = free[int(self.rng.integers(len(free)))]
        self.used.add(key)
        return key

    def locate(self, key: str, table: str = "items") -> str:
        """Describe a record by name (and look it up) or by id, per the observability knob."""
        name = self.db[table][key]["name"]
        if self.knobs.partial_observability:
            self.run("search" if table == "items" else "search_owners", {"query": name})
            return f"'{name}'"
        return f"'{name}' (id {key})"

    def subgoal(self) -> bool:
        t, rng, iid = self.theme, self.rng, f"{self.theme.item}_id"
        options = ["set_status", "adjust_qty", "create"] + [k for k in ("delete", "set_category", "rename", "transfer_qty", "assign", "unassign") if k in self.kinds]
        if "assign" in options and "search_owners" not in self.kinds and self.knobs.partial_observability:
            options.remove("assign")
        kind = options[int(rng.integers(len(options)))]
        if kind == "create":
            name = self._fresh_name()
            category = t.categories[int(rng.integers(len(t.categories)))]
            qty = int(rng.integers(1, 40))
            created = self.run("create", {"name": name, t.category_field: category, t.qty_field: qty})
            self.used.add(created["id"])
            self.parts.append(f"create a {t.item} named '{name}' ({t.category_field} {category}, {t.qty_field} {qty})")
            return True
        key = self.pick_item()
        if key is None:
            return False
        item = self.db["items"][key]
        if kind == "unassign" and item["owner"] is None:
            kind = "set_status"
        if kind == "assign" and item["owner"] is not None:
            kind = "set_status"
        where = self.locate(key)
        if kind == "set_status":
            status = [s for s in t.statuses if s != item["status"]][int(rng.integers(len(t.statuses) - 1))]
            self.run("set_status", {iid: key, "status": status})
            self.parts.append(f"set the status of the {t.item} {where} to '{status}'")
        elif kind == "adjust_qty":
            self.run("get", {iid: key})
            target = int(rng.integers(0, 60))
            if target == item[t.qty_field]:
                target += 1
            self.run("adjust_qty", {iid: key, "delta": target - item[t.qty_field]})
            self.parts.append(f"make the {t.qty_field} of the {t.item} {where} exactly {target}")
        elif kind == "delete":
            self.run("delete", {iid: key})
            self.parts.append(f"delete the {t.item} {where}")
        elif kind == "set_category":
            value = [c for c in t.categories if c != item[t.category_field]][int(rng.integers(len(t.categories) - 1))]
            self.run("set_category", {iid: key, t.category_field: value})
            self.parts.append(f"change the {t.category_field} of the {t.item} {where} to '{value}'")
        elif kind == "rename":
            new_name = self._fresh_name()
            self.run("rename", {iid: key, "new_name": new_name})
            self.parts.append(f"rename the {t.item} {where} to '{new_name}'")
        elif kind == "transfer_qty":
            other = self.pick_item()
            if other is None or item[t.qty_field] < 1:
                self.run("set_status", {iid: key, "status": [s for s in t.statuses if s != item["status"]][0]})
                self.parts.append(f"set the status of the {t.item} {where} to '{item['status']}'")
                return True
            where_other = self.locate(other)
            amount = int(rng.integers(1, item[t.qty_field] + 1))
            self.run("transfer_qty", {"from_id": key, "to_id": other, "amount": amount})
            self.parts.append(f"move {amount} {t.qty_field} from the {t.item} {where} to the {t.item} {where_other}")
        elif kind == "assign":
            owners = sorted(self.db["owners"])
            owner = owners[int(rng.integers(len(owners)))]
            owner_where = self.locate(owner, "owners")
            self.run("assign", {iid: key, f"{t.owner}_id": owner})
            self.parts.append(f"{t.assign_verb} the {t.item} {where} to the {t.owner} {owner_where}")
        elif kind == "unassign":
            self.run("unassign", {iid: key})
            self.parts.append(f"release the {t.item} {where} from its {t.owner}")
        return True

    def _fresh_name(self) -> str:
        names = {r["name"].lower() for r in self.db["items"].values()}
        for _ in range(200):
            name = f"{self.theme.adjectives[int(self.rng.integers(len(self.theme.adjectives)))]} {self.theme.nouns[int(self.rng.integers(len(self.theme.nouns)))]} {int(self.rng.integers(100, 999))}"
            if name.lower() not in names and not any(name.lower() in n or n in name.lower() for n in names):
                return name
        raise RuntimeError("could not draw a fresh name")  # pragma: no cover - 200 draws over 250k names


def generate_world(seed: int, index: int, knobs: Knobs) -> World:
    """Generate world ``index`` of ``seed`` (deterministic)."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, int(index), 0x5EED])
    theme = THEMES[int(rng.integers(len(THEMES)))]
    extras = [EXTRA_KINDS[i] for i in rng.permutation(len(EXTRA_KINDS))][: knobs.num_tools - len(CORE_KINDS)]
    distractors = [DISTRACTOR_KINDS[i] for i in rng.permutation(len(DISTRACTOR_KINDS))][: knobs.distractors]
    kinds = list(CORE_KINDS) + extras + distractors
    order = rng.permutation(len(kinds))
    kinds = [kinds[i] for i in order]
    db: dict[str, Any] = {"items": {}, "owners": {}, "meta": {"next_id": 1}}
    pairs = [(a, n) for a in theme.adjectives for n in theme.nouns]
    for i in rng.choice(len(pairs), size=knobs.num_items, replace=False):
        key = f"{theme.item_prefix}-{int(rng.integers(1000, 9999))}"
        while key in db["items"]:
            key = f"{theme.item_prefix}-{int(rng.integers(1000, 9999))}"
        db["items"][key] = {
            "name": f"{pairs[int(i)][0]} {pairs[int(i)][1]}",
            theme.category_field: theme.categories[int(rng.integers(len(theme.categories)))],
            "status": theme.statuses[int(rng.integers(len(theme.statuses)))],
            theme.qty_field: int(rng.integers(0, 50)),
            "owner": None,
        }
    people = [(first, last) for first in FIRST_NAMES for last in LAST_NAMES]
    for i in rng.choice(len(people), size=knobs.num_owners, replace=False):
        key = f"{theme.owner_prefix}-{int(rng.integers(1000, 9999))}"
        while key in db["owners"]:
            key = f"{theme.owner_prefix}-{int(rng.integers(1000, 9999))}"
        db["owners"][key] = {"name": f"{people[int(i)][0]} {people[int(i)][1]}"}
    owner_ids = sorted(db["owners"])
    for key in sorted(db["items"]):
        if rng.random() < 0.4:
            db["items"][key]["owner"] = owner_ids[int(rng.integers(len(owner_ids)))]
    tasks = [_make_task(db, theme, kinds, rng, knobs) for _ in range(knobs.tasks_per_world)]
    return World(theme, kinds, db, tasks)


def _make_task(db: dict[str, Any], theme: Theme, kinds: list[str], rng: np.random.Generator, knobs: Knobs) -> Task:
    builder = _Builder(db, theme, kinds, rng, knobs)
    bounds: list[int] = []
    """Per sub-goal, the end (exclusive) of its gold calls; its last call is the change it asks for."""
    while len(builder.gold) < knobs.task_length:
        if not builder.subgoal():
            break
        bounds.append(len(builder.gold))
    groups = _group(len(bounds), knobs.user_turns)
    turn_messages, turn_ends, checklist = [], [], []
    for k, (first, last) in enumerate(groups):
        steps = "; then ".join(builder.parts[first:last])
        if k == 0:
            turn_messages.append(f"You are operating the {theme.system} system. Please {steps}. Reply in plain text when you are done.")
        else:
            turn_messages.append(f"Thanks. Next, please {steps}. Reply in plain text when you are done.")
        turn_ends.append(bounds[last - 1] if last else 0)
        changes = [builder.gold[bounds[i] - 1] for i in range(first, last)]
        checklist.append(turn_checklist(changes, builder.parts[first:last]))
    return Task(turn_messages[0], builder.gold, builder.db, builder.examples, turn_messages, turn_ends, checklist)


def _group(n: int, turns: int) -> list[tuple[int, int]]:
    """Split ``n`` sub-goals into at most ``turns`` contiguous, near-equal groups (``[first, last)``)."""
    turns = max(1, min(turns, n))
    sizes = [n // turns + (1 if i < n % turns else 0) for i in range(turns)]
    out, start = [], 0
    for size in sizes:
        out.append((start, start + size))
        start += size
    return out


def turn_checklist(changes: list[tuple[str, dict[str, Any]]], parts: list[str]) -> list[dict[str, Any]]:
    """The standards of one user turn: each requested change made by its exact call, then a text report.

    The layout is the released EnvACE checklist's (question, focus_on, pass_condition,
    failure_examples, evidence, weight, required_for_next_turn); ``check`` makes each standard
    decidable from the trajectory (see :mod:`agentgym_suite.envs.shared.checklists`).
    Weights are equal and sum to 1 per turn; the changes are required before the next turn.
    """
    weight = round(1.0 / (len(changes) + 1), 8)
    standards: list[dict[str, Any]] = []
    for (name, arguments), part in zip(changes, parts):
        call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, sort_keys=True)
        standards.append({
            "question": f"Did the assistant {part}?",
            "focus_on": "assistant.tool_calls",
            "pass_condition": f"The assistant calls {name} with exactly these arguments and the call succeeds: {call}",
            "failure_examples": ["the call targets a different record id", "an argument value differs from the request",
                                 "the assistant stops or replies before making the change"],
            "evidence": [{"snippet": call}],
            "weight": weight,
            "required_for_next_turn": True,
            "check": {"call": {"name": name, "arguments": copy.deepcopy(arguments)}},
        })
    standards.append({
        "question": "Did the assistant report back to the user in plain text once the changes were made?",
        "focus_on": "assistant.content",
        "pass_condition": "The assistant ends the turn with a text reply and no tool call.",
        "failure_examples": ["the turn ends without a text reply"],
        "evidence": [{"snippet": "a plain-text reply"}],
        "weight": round(1.0 - weight * len(changes), 8),
        "required_for_next_turn": False,
        "check": {"reply": True},
    })
    return standards

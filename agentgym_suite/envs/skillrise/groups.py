"""Curated task groups: the trials a SkillRise run trains on, fixed in advance as data.

The released SkillRise code trains on a file of groups of K tasks of one task type, each
group's tasks ordered by plan length (shorter first), and serves them cyclically: the whole
list is shuffled once with the run's seed (``random.Random(seed).shuffle``) and then read in
that order, group after group, starting over at the end. A run plays each group with N
parallel trials (the trainer's group size).

:func:`build_groups` makes such a file from an env's own tasks by the released file's rule:
per task type, the tasks (sorted by id) are shuffled with the seed and cut into groups of K;
a last group short of K is filled up with the type's first tasks, marked ``padded``; each
group's tasks are then sorted by plan length (ties keep their drawn order). The files
shipped in ``data/`` are made by ``python -m agentgym_suite.envs.skillrise.build_groups``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

DATA_DIR = Path(__file__).resolve().parent / "data"
"""Where the shipped group files live."""


@dataclass(frozen=True)
class TaskGroup:
    """K tasks played in one trial, in order."""

    group_id: str
    task_type: str
    task_ids: tuple[str, ...]
    plan_lengths: tuple[int, ...]
    padded: tuple[bool, ...]
    """Per task: whether it was borrowed to fill the type's last group."""

    def as_json(self) -> dict[str, Any]:
        """The group as one entry of a group file."""
        return {"group_id": self.group_id, "task_type": self.task_type, "K": len(self.task_ids),
                "tasks": [{"task_id": t, "plan_len": n, "padded": p}
                          for t, n, p in zip(self.task_ids, self.plan_lengths, self.padded)]}


def build_groups(task_types: Mapping[str, str], plan_length: Callable[[str], int], *, k: int,
                 seed: int) -> list[TaskGroup]:
    """Groups of ``k`` tasks of one type (see the module docstring); ``task_types`` maps each task id
    to its type. Types come in order of first appearance in sorted task ids."""
    if k < 1:
        raise ValueError(f"k must be >= 1 (got {k}).")
    by_type: dict[str, list[str]] = {}
    for task_id in sorted(task_types):
        by_type.setdefault(task_types[task_id], []).append(task_id)
    rng = random.Random(seed)
    groups: list[TaskGroup] = []
    for task_type, ids in by_type.items():
        drawn = list(ids)
        rng.shuffle(drawn)
        for index, start in enumerate(range(0, len(drawn), k)):
            chunk = [(t, False) for t in drawn[start:start + k]]
            borrow = 0
            while len(chunk) < k:
                chunk.append((ids[borrow % len(ids)], True))
                borrow += 1
            chunk.sort(key=lambda item: plan_length(item[0]))  # stable: ties keep the drawn order
            groups.append(TaskGroup(f"{task_type}_K{k}_{index}", task_type, tuple(t for t, _ in chunk),
                                    tuple(int(plan_length(t)) for t, _ in chunk), tuple(p for _, p in chunk)))
    return groups


def write_groups(path: Path, groups: Iterable[TaskGroup], **about: Any) -> None:
    """Write a group file: ``about`` (where the tasks come from, the rule) and the groups."""
    head = json.dumps(about, indent=1)[:-2]  # the "about" object, still open
    lines = ",\n  ".join(json.dumps(g.as_json()) for g in groups)
    path.write_text(f'{head},\n "groups": [\n  {lines}\n ]\n}}\n', encoding="utf-8")


def group_file(name: str) -> Path:
    """A group file by path, or by the name of a shipped one (``alfworld_train_k3``)."""
    path = Path(name)
    if path.suffix == ".json" and path.exists():
        return path
    shipped = DATA_DIR / f"{name}.json"
    if shipped.exists():
        return shipped
    known = sorted(p.stem for p in DATA_DIR.glob("*.json"))
    raise FileNotFoundError(f"no SkillRise group file {name!r}: give a path to a .json group file or one of {known}.")


def load_groups(name: str) -> list[TaskGroup]:
    """The groups of a group file (see :func:`group_file`), in file order."""
    path = group_file(name)
    payload = json.loads(path.read_text(encoding="utf-8"))
    groups = []
    for entry in payload.get("groups", []):
        tasks = entry["tasks"]
        groups.append(TaskGroup(str(entry["group_id"]), str(entry.get("task_type", "")),
                                tuple(str(t["task_id"]) for t in tasks), tuple(int(t.get("plan_len", 0)) for t in tasks),
                                tuple(bool(t.get("padded", False)) for t in tasks)))
    if not groups:
        raise ValueError(f"{path} holds no groups.")
    sizes = {len(g.task_ids) for g in groups}
    if len(sizes) != 1:
        raise ValueError(f"{path}: every group needs the same number of tasks (found sizes {sorted(sizes)}).")
    return groups


def serving_order(groups: list[TaskGroup], seed: int) -> list[TaskGroup]:
    """The order a run serves ``groups`` in: shuffled once with ``seed``, then read cyclically."""
    order = list(groups)
    random.Random(seed).shuffle(order)
    return order

"""ScienceWorld's 30 tasks, their variation splits, and the ``task=``/``split=`` kwargs.

The table below restates facts of the ``scienceworld`` 1.2.3 simulator (task names, the
paper's task numbers, variation counts, and the train/dev/test split sizes its
``getVariationsTrain/Dev/Test`` return): the simulator splits each task's variations into
three contiguous ranges, train first, then dev, then test. Keeping the table in Python lets
``task_ids()`` answer without starting a JVM; a Java test checks it against the live simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from agentgym_suite.core.errors import UnknownTaskError


@dataclass(frozen=True)
class SciWorldTask:
    """One ScienceWorld task: its simulator name, paper number, title and variation split."""

    name: str
    number: str
    title: str
    variations: int
    n_train: int
    n_dev: int

    @property
    def topic(self) -> str:
        """The task's topic family (the first part of its paper number; see :data:`TOPIC_FAMILIES`)."""
        return TOPIC_FAMILIES[self.number.split("-")[0]]

    def variations_of(self, split: str) -> range:
        """Variation indices of ``split`` (``train``, ``dev``, ``test`` or ``all``)."""
        dev_start = self.n_train
        test_start = self.n_train + self.n_dev
        ranges = {
            "train": range(0, dev_start),
            "dev": range(dev_start, test_start),
            "test": range(test_start, self.variations),
            "all": range(0, self.variations),
        }
        return ranges[split]


TOPIC_FAMILIES: dict[str, str] = {
    "1": "scienceworld_matter",          # changes of state: boil, melt, freeze, any
    "2": "scienceworld_measurement",     # thermometer, melting points
    "3": "scienceworld_electricity",     # circuits, renewable energy, conductivity
    "4": "scienceworld_classification",  # find a living / non-living thing, a plant, an animal
    "5": "scienceworld_plants",          # grow a plant, grow a fruit
    "6": "scienceworld_chemistry",       # mixing, paint colours
    "7": "scienceworld_lifespan",        # longest- / shortest-lived animals
    "8": "scienceworld_life_stages",     # life stages of a plant, an animal
    "9": "scienceworld_forces",          # inclined planes, friction
    "10": "scienceworld_genetics",       # Mendelian genetics
}
"""The paper's ten topics (the first part of a task's number) -> the family its tasks report."""

TASKS: tuple[SciWorldTask, ...] = tuple(
    SciWorldTask(*row)
    for row in (
        ("boil", "1-1", "Matter: Changes of State (Boiling)", 30, 14, 7),
        ("melt", "1-2", "Matter: Changes of State (Melting)", 30, 14, 7),
        ("freeze", "1-3", "Matter: Changes of State (Freezing)", 30, 14, 7),
        ("change-the-state-of-matter-of", "1-4", "Matter: Changes of State (Any)", 30, 14, 7),
        ("use-thermometer", "2-1", "Measurement: Use Thermometer", 540, 270, 135),
        ("measure-melting-point-known-substance", "2-2", "Measurement: Measuring Melting Point (known)", 436, 218, 109),
        ("measure-melting-point-unknown-substance", "2-3", "Measurement: Measuring Melting Point (unknown)", 300, 150, 75),
        ("power-component", "3-1", "Electricity: Create a circuit", 20, 10, 5),
        ("power-component-renewable-vs-nonrenewable-energy", "3-2", "Electricity: Renewable vs Non-renewable Energy", 20, 10, 5),
        ("test-conductivity", "3-3", "Electricity: Test Conductivity (known)", 900, 450, 225),
        ("test-conductivity-of-unknown-substances", "3-4", "Electricity: Test Conductivity (unknown)", 600, 300, 150),
        ("find-living-thing", "4-1", "Classification: Find a living thing", 300, 150, 75),
        ("find-non-living-thing", "4-2", "Classification: Find a non-living thing", 300, 150, 75),
        ("find-plant", "4-3", "Classification: Find a plant", 300, 150, 75),
        ("find-animal", "4-4", "Classification: Find an animal", 300, 150, 75),
        ("grow-plant", "5-1", "Biology: Grow a plant", 126, 62, 31),
        ("grow-fruit", "5-2", "Biology: Grow a fruit", 126, 62, 31),
        ("chemistry-mix", "6-1", "Chemistry: Mixing (generic)", 32, 16, 8),
        ("chemistry-mix-paint-secondary-color", "6-2", "Chemistry: Mixing paints (secondary colours)", 36, 18, 9),
        ("chemistry-mix-paint-tertiary-color", "6-3", "Chemistry: Mixing paints (tertiary colours)", 36, 18, 9),
        ("lifespan-longest-lived", "7-1", "Biology: Identify longest-lived animal", 125, 62, 31),
        ("lifespan-shortest-lived", "7-2", "Biology: Identify shortest-lived animal", 125, 62, 31),
        ("lifespan-longest-lived-then-shortest-lived", "7-3", "Biology: Identify longest-then-shortest-lived animal", 125, 62, 31),
        ("identify-life-stages-1", "8-1", "Biology: Identify life stages (plant)", 14, 6, 3),
        ("identify-life-stages-2", "8-2", "Biology: Identify life stages (animal)", 10, 4, 2),
        ("inclined-plane-determine-angle", "9-1", "Forces: Inclined Planes (determine angle)", 168, 84, 42),
        ("inclined-plane-friction-named-surfaces", "9-2", "Forces: Friction (known surfaces)", 1386, 692, 346),
        ("inclined-plane-friction-unnamed-surfaces", "9-3", "Forces: Friction (unknown surfaces)", 162, 80, 40),
        ("mendelian-genetics-known-plant", "10-1", "Biology: Mendelian Genetics (known plants)", 120, 60, 30),
        ("mendelian-genetics-unknown-plant", "10-2", "Biology: Mendelian Genetics (unknown plants)", 480, 240, 120),
    )
)
"""The 30 tasks in the paper's order (``task=0`` is ``boil``, task 1-1)."""

TASK_NAMES: tuple[str, ...] = tuple(t.name for t in TASKS)
SPLITS = ("train", "dev", "test", "all")
SIMPLIFICATIONS = ("teleportAction", "selfWateringFlowerPots", "openContainers", "openDoors", "noElectricalAction")
"""The simulator's simplifications; ``easy`` turns on all of them that a task allows."""
ELECTRICAL_TASKS = frozenset(t.name for t in TASKS if t.name.startswith(("power-component", "test-conductivity")))

TaskSpec = str | int | Sequence[str | int]


def find_task(key: str | int) -> SciWorldTask:
    """Look a task up by simulator name (``boil``), paper number (``1-1``) or index (0-29)."""
    if isinstance(key, bool):
        raise UnknownTaskError(f"task={key!r} is not a ScienceWorld task; pass a name, number or index.")
    if isinstance(key, int) or (isinstance(key, str) and key.strip().isdigit()):
        index = int(key)
        if 0 <= index < len(TASKS):
            return TASKS[index]
        raise UnknownTaskError(f"Task index {index} is out of range: ScienceWorld has tasks 0-{len(TASKS) - 1}.")
    text = str(key).strip().lower().replace("mendellian", "mendelian")
    for task in TASKS:
        if text in (task.name, task.number, task.title.lower()):
            return task
    raise UnknownTaskError(
        f"Unknown ScienceWorld task {key!r}. Pass a name ({', '.join(TASK_NAMES[:3])}, …), a paper number "
        f"such as '4-1', an index 0-29, or 'all'. Every name: {', '.join(TASK_NAMES)}."
    )


def select_tasks(spec: TaskSpec) -> list[SciWorldTask]:
    """Resolve the ``task`` kwarg: one key, ``"all"``, or a list of keys (duplicates dropped)."""
    if isinstance(spec, str) and spec.strip().lower() == "all":
        return list(TASKS)
    keys = [spec] if isinstance(spec, (str, int)) else list(spec)
    if not keys:
        raise UnknownTaskError("task=[] selects no ScienceWorld task; pass a name, a list of names or 'all'.")
    chosen: list[SciWorldTask] = []
    for key in keys:
        task = find_task(key)
        if task not in chosen:
            chosen.append(task)
    return chosen


def check_split(split: str) -> str:
    """Return ``split`` if the simulator defines it, else raise with the valid choices."""
    if split not in SPLITS:
        raise ValueError(f"split={split!r}; choose one of {SPLITS}.")
    return split


def check_simplification(simplification: str, tasks: Sequence[SciWorldTask]) -> str:
    """Validate a simplification string (``""``, ``"easy"`` or a comma-separated list); return it normalised."""
    parts = [p.strip() for p in (simplification or "").split(",") if p.strip()]
    for part in parts:
        if part != "easy" and part not in SIMPLIFICATIONS:
            raise ValueError(
                f"Unknown ScienceWorld simplification {part!r}; use 'easy' or a comma-separated list of {SIMPLIFICATIONS}."
            )
    if "easy" in parts and len(parts) > 1:
        raise ValueError("'easy' already turns on every simplification; pass it alone.")
    electrical = [t.name for t in tasks if t.name in ELECTRICAL_TASKS]
    if "noElectricalAction" in parts and electrical:
        raise ValueError(
            f"noElectricalAction removes the actions that tasks {electrical} need; drop it or choose other tasks."
        )
    return ",".join(parts)


def task_id_of(task: SciWorldTask, variation: int) -> str:
    """The suite's task id ``<task-name>/<variation>``."""
    return f"{task.name}/{variation}"


def parse_task_id(task_id: str) -> tuple[SciWorldTask, int]:
    """Split ``<task-name>/<variation>`` back into the task and its variation index."""
    name, _, variation = str(task_id).rpartition("/")
    task = find_task(name)
    return task, int(variation)

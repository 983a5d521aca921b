"""A bounded, ranked subset of ScienceWorld's valid actions for ``info["admissible_actions"]``.

The simulator's list of valid action/object combinations holds thousands of entries per room
(every ``connect X to Y``, ``pour X into Y``…), most of them absurd. :func:`rank_actions`
keeps a useful few with public information only — the action template, the object classes
the simulator reports, and word overlap with the task description — never the gold path:

* drop templates that never help (``reset task``) and object roles that cannot work
  (picking up a room, pouring into a door, connecting non-electrical objects);
* score what is left by template (navigation and state changes first), by the objects'
  salience (words shared with the task, items in the inventory), and cap each template so
  the list stays varied.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

# template id -> (name, base priority); ids as the simulator numbers its templates
TEMPLATES: dict[int, tuple[str, float]] = {
    0: ("open", 6.0), 1: ("close", 2.0), 2: ("go", 9.0), 3: ("look around", 7.0), 4: ("look at", 3.0),
    5: ("look in", 3.0), 6: ("activate", 6.0), 7: ("deactivate", 5.0), 8: ("eat", 0.5), 9: ("move", 4.0),
    10: ("pour", 4.0), 11: ("focus on", 3.5), 12: ("reset task", -100.0), 13: ("use", 5.0), 14: ("read", 3.0),
    15: ("flush", 1.0), 16: ("connect", 4.0), 17: ("disconnect", 2.0), 18: ("wait1", 5.0), 19: ("wait", 4.0),
    20: ("inventory", 6.5), 21: ("pick up", 5.0), 22: ("put down", 4.0), 23: ("mix", 3.0), 24: ("task", 2.0),
    26: ("dunk", 1.0),
}
PER_TEMPLATE_CAP = 10
TEMPLATE_CAPS = {4: 6, 5: 4, 9: 8, 10: 6, 11: 6, 13: 6, 23: 4, 26: 2}
"""Per-template caps (default ``PER_TEMPLATE_CAP``) keep the list varied."""
STOPWORDS = frozenset(
    "a an the to of in on it its is are be your you task first then that this and or for with by from "
    "into at as if not can will should which what when there thing things substance focus move".split()
)
FIXED = frozenset({"room", "door", "furniture", "outside", "agent"})
HOLDERS = frozenset({"container", "furniture", "device", "inventory"})


@lru_cache(maxsize=1)
def _type_classes() -> dict[int, str]:
    """Simulator type id -> coarse class (room, door, furniture, container, device, substance…)."""
    import scienceworld.constants as sw_constants

    table: dict[int, str] = {}
    path = Path(sw_constants.BASEPATH) / "object_type_ids.tsv"
    for line in path.read_text().splitlines():
        name, _, ident = line.partition("\t")
        if not ident.strip().isdigit():
            continue
        table[int(ident)] = _coarse_class(name)
    return table


def _coarse_class(java_class: str) -> str:
    parts = java_class.split(".")
    package = parts[2] if len(parts) > 3 else ""
    sub = parts[3] if len(parts) > 4 else ""
    leaf = parts[-1]
    if leaf == "InventoryContainer":
        return "inventory"
    mapping = {
        "agent": "agent", "location": "room", "portal": "door", "environmentoutside": "outside",
        "devices": "device", "electricalcomponent": "electrical", "substance": "substance",
        "livingthing": "living", "document": "document",
    }
    if package == "containers":
        return "furniture" if sub == "furniture" else "container"
    return mapping.get(package, "item")


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` minus stopwords (used to measure salience)."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS and len(w) > 2}


def _salience(referent: str, task_words: set[str]) -> float:
    words = content_words(referent.replace(" in inventory", ""))
    score = 1.5 * len(words & task_words)
    if referent.endswith("in inventory"):
        score += 1.0
    return score


def _allowed(template: int, classes: list[str], electrical_task: bool, salient: bool) -> bool:
    first = classes[0] if classes else ""
    if template == 12:  # reset task throws the episode's progress away
        return False
    if template == 2:  # go to: rooms only (the "door to X" spelling duplicates them)
        return first in ("room", "outside")
    if template in (0, 1):
        return first not in ("room", "agent", "substance", "living")
    if template in (4, 5):
        return first not in ("agent", "door") and not (template == 5 and first == "room")
    if template == 11:  # focus on: a wrong focus fails the task, so offer only salient objects
        return salient and first not in ("room", "door", "agent", "outside")
    if template == 21:
        if first == "device":  # stoves and sinks are fixed; thermometers are not: keep salient ones
            return salient
        return first not in FIXED
    if template == 9:
        return first not in FIXED and len(classes) == 2 and classes[1] in HOLDERS | {"room"}
    if template in (10, 26):
        return first in ("container", "substance") and len(classes) == 2 and classes[1] in ("container", "device")
    if template == 13:
        return first in ("device", "item", "electrical", "container") and len(classes) == 2 and classes[1] not in ("door", "agent")
    if template in (16, 17):
        return electrical_task and all(c in ("electrical", "device") for c in classes)
    if template == 23:
        return first == "container"
    if template in (6, 7):
        return first in ("device", "electrical", "container", "furniture")
    if template in (8, 15, 14, 22):
        return first not in ("room", "door", "agent")
    return True


def rank_actions(valid: Iterable[dict[str, Any]], task_description: str, limit: int) -> list[str]:
    """Pick at most ``limit`` useful actions from the simulator's valid combinations.

    Args:
        valid: entries with ``action``, ``template_id`` and ``type_ids`` (the simulator's JSON).
        task_description: the task text the agent sees (its words mark salient objects).
        limit: the most actions to return.
    """
    classes_of = _type_classes()
    task_words = content_words(task_description)
    electrical_task = bool(task_words & {"electrical", "circuit", "conductive", "conductivity", "powered", "power", "renewable"})
    scored: list[tuple[float, str, int]] = []
    seen: set[str] = set()
    for entry in valid:
        action = str(entry.get("action", ""))
        template = int(entry.get("template_id", -1))
        if not action or action in seen or template not in TEMPLATES:
            continue
        seen.add(action)
        classes = [classes_of.get(int(t), "item") for t in entry.get("type_ids", [])]
        objects = _objects_of(action, TEMPLATES[template][0], len(classes))
        salience = sum(_salience(o, task_words) for o in objects)
        if not _allowed(template, classes, electrical_task, salience > 0):
            continue
        scored.append((TEMPLATES[template][1] + salience, action, template))
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[str] = []
    per_template: dict[int, int] = {}
    for _, action, template in scored:
        if per_template.get(template, 0) >= TEMPLATE_CAPS.get(template, PER_TEMPLATE_CAP):
            continue
        per_template[template] = per_template.get(template, 0) + 1
        chosen.append(action)
        if len(chosen) >= limit:
            break
    return chosen


_JOINERS = re.compile(r" (?:to|into|in|on) ")


def _objects_of(action: str, verb: str, n_objects: int) -> list[str]:
    """The object phrases of ``action`` (best effort: the text after the verb, split on its joiner)."""
    rest = action[len(verb):].strip() if action.startswith(verb) else action
    if verb == "go" and rest.startswith("to "):
        rest = rest[3:]
    if n_objects <= 1:
        return [rest] if rest else []
    parts = _JOINERS.split(rest)
    if len(parts) == 2:
        return parts
    # ambiguous joiners ("move X in inventory to Y"): split on the last joiner
    head, _, tail = rest.rpartition(" to " if " to " in rest else " into " if " into " in rest else " on ")
    return [head, tail] if head else [rest]

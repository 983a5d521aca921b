"""VitaBench 2.0 data: one sequence of subtasks per user, in the official ``tasks.json`` format.

Where the files go: the official dataset (``meituan-longcat/VitaBench-2.0`` on the Hugging Face
hub, 56 users, 771 subtasks) ships ``tasks.json`` (Chinese) and, once released, ``tasks_en.json``.
Put them in ``$AGENTGYM_DATA/vitabench/domains/personalization/`` (upstream keeps them in
``data/vita/domains/personalization/``); the English file is preferred when both are there, or
pass ``sequences_path=`` to read any file of that format.

Format (upstream's ``PersonalizationTask``): a JSON list of users, each

``{"id": str, "user_id": str, "user_profile": {...}, "subtasks": [subtask, ...]}``

with the subtasks in the order the user lived them. A subtask holds

- ``subtask_id``, ``domain`` (``delivery``, ``instore`` or ``ota``), ``instruction`` (the user's
  deliberately vague request), ``environment`` (that domain's database, with ``time``);
- ``interactions``: the fragmented interactions since the previous subtask that the memory
  ingests before this one starts, each either a day record ``{"date", "behavior": [{"behavior_type",
  "content"}], "dialogue": [messages]}`` or an event ``{"type", "timestamp", "content"}``
  (searches, orders, reviews, browsing, conversations…);
- ``skill_tested``: e.g. ``["proactive"]`` or ``["update"]`` (empty: plain personalization);
- ``user_intention``: what a proactive subtask's user holds back until the agent asks for it;
- ``user_scenario`` (``user_profile``, ``personalized_preference_memory``: the ground-truth
  preferences), ``evaluation_criteria`` (``expected_states``, ``overall_rubrics``) and an
  optional ``message_history``.

Task ids are ``<sequence id>/<position>``; each loaded subtask also carries ``sequence_id``,
``user_id``, ``index`` and the sequence's ``user_profile``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentgym_suite.core.data import data_dir
from agentgym_suite.core.errors import AgentGymError, DataNotFoundError

FILE_NAMES = ("tasks_en.json", "tasks.json")
PLAYABLE_DOMAINS = ("delivery", "instore", "ota")
"""Subtask domains this suite has tools for, alone or together (a cross-domain subtask names several:
``delivery,ota``); a subtask of another domain is not played but still feeds the memory."""


class SequenceFormatError(AgentGymError, ValueError):
    """A VitaBench 2.0 file that is not in the official format."""


def data_folder() -> Path:
    """Where the official 2.0 files are looked for."""
    return data_dir() / "vitabench" / "domains" / "personalization"


def default_path() -> Path:
    """The 2.0 task file to read: ``tasks_en.json`` when present, else ``tasks.json``."""
    folder = data_folder()
    return next((folder / name for name in FILE_NAMES if (folder / name).exists()), folder / FILE_NAMES[-1])


def _problem(where: str, what: str) -> SequenceFormatError:
    return SequenceFormatError(f"{where}: {what}. Expected the official VitaBench 2.0 format (see agentgym_suite.envs.vitabench.sequences).")


def _check_subtask(where: str, subtask: Any) -> None:
    if not isinstance(subtask, dict):
        raise _problem(where, f"a subtask must be an object, got {type(subtask).__name__}")
    if "instruction" not in subtask:
        hint = " (it has 'instructions'/'timestamp': an older, unofficial layout)" if "instructions" in subtask or "timestamp" in subtask else ""
        raise _problem(where, f"subtask has no 'instruction'{hint}")
    if not isinstance(subtask.get("environment"), dict):
        raise _problem(where, "subtask has no 'environment' object")
    if not isinstance(subtask.get("interactions", []), list) or not isinstance(subtask.get("skill_tested", []), list):
        raise _problem(where, "'interactions' and 'skill_tested' must be lists")


def parse_sequences(records: Any, source: str = "<data>") -> dict[str, dict[str, Any]]:
    """Subtasks by ``<sequence id>/<position>`` from the parsed JSON of an official task file.

    Raises:
        SequenceFormatError: when the records are not in the official format.
    """
    if not isinstance(records, list):
        raise _problem(source, f"the file must hold a JSON list of users, got {type(records).__name__}")
    tasks: dict[str, dict[str, Any]] = {}
    for n, user in enumerate(records):
        where = f"{source}, user #{n}"
        if not isinstance(user, dict) or not isinstance(user.get("subtasks"), list):
            raise _problem(where, "each user needs a 'subtasks' list")
        profile = dict(user.get("user_profile") or {})
        user_id = str(user.get("user_id") or profile.get("user_id") or user.get("id") or n)
        sequence = str(user.get("id") or user_id)
        for index, subtask in enumerate(user["subtasks"]):
            _check_subtask(f"{where}, subtask #{index}", subtask)
            task = dict(subtask)
            task.setdefault("interactions", [])
            task.setdefault("skill_tested", [])
            task.setdefault("user_intention", "")
            task.setdefault("subtask_id", str(index))
            task.update(id=f"{sequence}/{index}", sequence_id=sequence, user_id=user_id, index=index, user_profile=profile)
            if task["id"] in tasks:
                raise _problem(where, f"two users share the id {sequence!r}")
            tasks[task["id"]] = task
    if not tasks:
        raise DataNotFoundError(f"{source} holds no subtasks.")
    return tasks


def load_sequences(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Read an official 2.0 task file (default: :func:`default_path`); see :func:`parse_sequences`."""
    path = Path(path) if path is not None else default_path()
    if not path.exists():
        raise DataNotFoundError(
            f"VitaBench 2.0 tasks not found at {path}. Download the official dataset (meituan-longcat/VitaBench-2.0) "
            f"and put tasks.json / tasks_en.json in {data_folder()}, or pass sequences_path=<file>.")
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise _problem(str(path), f"not valid JSON ({exc})") from None
    return parse_sequences(records, str(path))


def playable(task: dict[str, Any]) -> bool:
    """True when this suite has the tools for the subtask's domain (every domain of a cross-domain
    subtask such as ``delivery,ota``)."""
    return all(part in PLAYABLE_DOMAINS for part in str(task.get("domain", "")).split(","))


def unplayable_reason(task: dict[str, Any]) -> str:
    """Why a subtask is not played (a domain without tools here)."""
    return f"no tools for the {task.get('domain')!r} domain"


def sequence_of(tasks: dict[str, dict[str, Any]], task: dict[str, Any]) -> list[dict[str, Any]]:
    """The subtasks of ``task``'s user up to and including ``task``, in order."""
    return [tasks[f"{task['sequence_id']}/{i}"] for i in range(int(task["index"]) + 1)]


__all__ = ["FILE_NAMES", "PLAYABLE_DOMAINS", "SequenceFormatError", "data_folder", "default_path",
           "load_sequences", "parse_sequences", "playable", "sequence_of", "unplayable_reason"]

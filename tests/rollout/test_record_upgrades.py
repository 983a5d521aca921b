"""The record-upgrade extension point: packages keep their older trajectory files readable.

A key the loader does not know is dropped when a record is built; a declared upgrade moves such
data to where the loader reads it. These tests use a made-up package layout (a turn's ``notes``,
which the current layout keeps in the turn's ``info``), declared each way the module allows: at
run time, and as an entry point of an installed distribution built in a temporary folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentgym_suite.core import plugins
from agentgym_suite.rollout import Trajectory, Turn, read_trajectories
from agentgym_suite.rollout.record_upgrades import (
    record_upgrades,
    register_record_upgrade,
    unregister_record_upgrade,
)

OLD_LINE = {"task_id": "t0", "env_id": "Fake-v0", "turns": [
    {"index": 0, "prompt_text": "p", "completion_text": "look", "notes": ["a lamp", "a door"]},
    {"index": 1, "prompt_text": "p", "completion_text": "open door"},
]}


def notes_into_info(record: dict[str, Any]) -> dict[str, Any]:
    """The made-up package's upgrade: a turn's ``notes`` move to ``info["notes"]``."""
    turns = []
    for turn in record.get("turns") or []:
        turn = dict(turn)
        if "notes" in turn:
            turn["info"] = {**(turn.get("info") or {}), "notes": turn.pop("notes")}
        turns.append(turn)
    return {**record, "turns": turns}


@pytest.fixture()
def registered() -> Iterator[None]:
    register_record_upgrade("notes", notes_into_info)
    yield
    unregister_record_upgrade("notes")


def _old_file(tmp_path: Path) -> Path:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(OLD_LINE) + "\n", encoding="utf-8")
    return path


def test_without_an_upgrade_the_unknown_key_is_dropped(tmp_path: Path) -> None:
    (back,) = read_trajectories(_old_file(tmp_path))
    assert back.turns[0].info == {}  # what the hook exists for


def test_a_registered_upgrade_keeps_the_data(tmp_path: Path, registered: None) -> None:
    (back,) = read_trajectories(_old_file(tmp_path))
    assert back.turns[0].info == {"notes": ["a lamp", "a door"]} and back.turns[1].info == {}
    assert [u.name for u in record_upgrades()][-1] == "notes"
    current = Trajectory(task_id="t1", turns=[Turn(index=0, prompt_text="p", completion_text="c", info={"won": True})])
    assert Trajectory.from_dict(current.to_dict()) == current  # a current record passes unchanged


def test_registering_twice_is_idempotent_and_a_name_is_taken_once(registered: None) -> None:
    register_record_upgrade("notes", notes_into_info)
    assert [u.name for u in record_upgrades()].count("notes") == 1
    with pytest.raises(ValueError, match="already registered"):
        register_record_upgrade("notes", lambda record: record)
    with pytest.raises(TypeError, match="must be a function"):
        register_record_upgrade("broken", "not callable")  # type: ignore[arg-type]


def test_a_failing_upgrade_stops_the_load_with_its_name() -> None:
    def boom(record: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("turns")

    register_record_upgrade("boom", boom)
    try:
        with pytest.raises(ValueError, match=r"record upgrade 'boom' .* task 't0'.*KeyError"):
            Trajectory.from_dict(OLD_LINE)
    finally:
        unregister_record_upgrade("boom")
    register_record_upgrade("nothing", lambda record: None)  # type: ignore[arg-type,return-value]
    try:
        with pytest.raises(ValueError, match="'nothing' .* returned NoneType"):
            Trajectory.from_dict(OLD_LINE)
    finally:
        unregister_record_upgrade("nothing")


def test_an_installed_distribution_declares_its_upgrade_by_entry_point(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "notes_pkg_records.py").write_text(
        "def upgrade(record):\n"
        "    turns = [dict(t, info={**(t.get('info') or {}), 'notes': t['notes']}) if 'notes' in t else t\n"
        "             for t in record.get('turns') or []]\n"
        "    return {**record, 'turns': turns}\n", encoding="utf-8")
    info = site / "notes_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: notes-pkg\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{plugins.RECORD_UPGRADES_GROUP}]\nnotes = notes_pkg_records:upgrade\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    try:
        found = [u for u in record_upgrades() if u.name == "notes"]
        assert len(found) == 1 and "notes-pkg" in found[0].origin
        (back,) = read_trajectories(_old_file(tmp_path))
        assert back.turns[0].info == {"notes": ["a lamp", "a door"]}
    finally:
        monkeypatch.undo()
        plugins.refresh()
    assert not [u for u in record_upgrades() if u.name == "notes"]

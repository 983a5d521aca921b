"""Resuming picks the newest complete checkpoint and skips one a kill left half written."""

from __future__ import annotations

import json
from pathlib import Path

from agentgym_suite.trainers.checkpoints import is_complete, last_complete_checkpoint


def _checkpoint(root: Path, step: int, state: str | None) -> Path:
    path = root / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "model.safetensors").write_bytes(b"weights")
    if state is not None:
        (path / "trainer_state.json").write_text(state, encoding="utf-8")
    return path


def test_partial_checkpoints_are_skipped(tmp_path: Path) -> None:
    _checkpoint(tmp_path, 2, json.dumps({"global_step": 2}))
    _checkpoint(tmp_path, 10, json.dumps({"global_step": 10}))
    _checkpoint(tmp_path, 11, '{"global_step": 1')  # torn state file
    _checkpoint(tmp_path, 12, None)  # killed before the state was written
    _checkpoint(tmp_path, 13, json.dumps({"global_step": 3}))  # state of another step
    (tmp_path / "checkpoint-14").write_text("not a directory", encoding="utf-8")
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-10")  # numeric, not lexical, order
    assert not is_complete(tmp_path / "checkpoint-12") and is_complete(tmp_path / "checkpoint-2")


def test_no_complete_checkpoint_gives_none(tmp_path: Path) -> None:
    assert last_complete_checkpoint(tmp_path / "missing") is None
    _checkpoint(tmp_path, 1, None)
    assert last_complete_checkpoint(tmp_path) is None

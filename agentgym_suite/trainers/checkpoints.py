"""Which checkpoint a resumed run starts from.

A run killed while it saves leaves ``checkpoint-N`` half written (weights but no optimizer, or
no ``trainer_state.json``); transformers' own lookup picks the highest number and then fails to
load it. ``trainer_state.json`` is the last file the trainer writes into a checkpoint, so a
checkpoint counts as complete when that file parses and names the directory's step.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
STATE_FILE = "trainer_state.json"


def is_complete(checkpoint: str | Path) -> bool:
    """True when ``checkpoint`` holds a readable trainer state for its own step."""
    path = Path(checkpoint)
    match = _CHECKPOINT.match(path.name)
    if match is None or not path.is_dir():
        return False
    try:
        state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and state.get("global_step") == int(match.group(1))


def last_complete_checkpoint(output_dir: str | Path) -> str | None:
    """The highest-numbered complete ``checkpoint-N`` directory under ``output_dir`` (None if none)."""
    root = Path(output_dir)
    if not root.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _CHECKPOINT.match(p.name))]
    for _, path in sorted(found, reverse=True):
        if is_complete(path):
            return str(path)
    return None

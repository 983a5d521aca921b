"""Build a model directory once under the cache, safely when several processes race.

The directory is written into a staging folder beside the target and moved into place with
one ``os.replace``, so a reader never sees a half-written model; when another process wins
the race, its copy is kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from agentgym_suite.core.data import cache_dir


def cached_model_dir(
    name: str,
    required: tuple[str, ...],
    build: Callable[[Path], None],
    root: Path | None = None,
) -> Path:
    """Return ``(root or cache_dir()/models)/name``, calling ``build(staging)`` first when needed.

    Args:
        name: folder name of the model (include a version so a changed build gets a new folder).
        required: files whose presence means the directory is complete.
        build: writes the model into the folder it is given.
        root: parent folder; defaults to ``cache_dir() / "models"``.
    """
    target = (root or cache_dir() / "models") / name
    if all((target / f).exists() for f in required):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        build(staging)
        try:
            os.replace(staging, target)
        except OSError:  # another process finished first
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target

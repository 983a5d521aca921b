"""How a benchmark's data is described: what the env needs, where it comes from, how it is checked.

Each benchmark package declares its own :class:`DataSource` (``envs/<benchmark>/data_source.py``)
and its ``EnvEntry`` in ``registration.py`` points to it. ``agentgym data fetch NAME`` downloads
the source's files into ``$AGENTGYM_DATA/NAME/``. Each file is checked against the git blob id
its upstream repository records for it (the first 12 hex digits; ``git hash-object`` computes
the same id), so a corrupted or altered download is rejected. Archives are checked file by
file after extraction where ids are known.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class RemoteFile:
    """One downloadable file (or archive) and where it goes."""

    url: str
    dest: str
    """Path relative to the benchmark folder (for archives: the folder to extract into)."""
    git_blob: str = ""
    """First hex digits of the upstream git blob id; empty when upstream publishes none."""
    sha256: str = ""
    """The file's full sha256, checked on download when given (for files pinned to an upstream commit)."""
    archive_members: dict[str, str] = field(default_factory=dict)
    """For archives: member path prefix inside the archive -> destination prefix."""


@dataclass(frozen=True)
class ManualFile:
    """A file the user downloads and places by hand (it cannot be fetched here, e.g. a Hugging Face
    dataset file), with what ``agentgym data verify`` checks it against."""

    url: str
    """Where to download it."""
    dest: str
    """Path relative to the benchmark folder."""
    rows: int | None = None
    """Lines (JSONL records) the published file has; checked when given."""
    sha256: str = ""
    """The published sha256; checked when given."""
    size: int | None = None
    """The published size in bytes; checked when given."""
    note: str = ""
    """What the file is for, or a step after the download (decompress, concatenate parts)."""


@dataclass(frozen=True)
class DataSource:
    """One benchmark's data: what its env needs and how it is obtained."""

    benchmark: str
    """The folder under ``$AGENTGYM_DATA`` (and the name ``agentgym data`` takes)."""
    files: tuple[RemoteFile, ...] = ()
    note: str = ""
    """Shown when nothing can be downloaded (data in a package, or not redistributable)."""
    known_blobs: dict[str, str] = field(default_factory=dict)
    """Relative path -> git blob prefix, for ``agentgym data verify``."""
    required: tuple[str, ...] = ()
    """Paths (or glob patterns such as ``*.json``) inside the folder that the env cannot run
    without; empty when the env reads no data folder (data in a package, or generated)."""
    manual_files: tuple[ManualFile, ...] = ()
    """Files the user places by hand; ``agentgym data fetch`` says where each comes from and goes,
    ``agentgym data verify`` checks those present."""
    after_fetch: Callable[[Path], list[Path]] | None = None
    """Run on the benchmark folder after a download (e.g. to copy files an installed package
    ships); returns the paths it wrote."""


def git_blob_id(path: Path) -> str:
    """The git blob id (sha1 of ``"blob <size>\\0" + content``) of a file."""
    digest = hashlib.sha1()
    digest.update(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
